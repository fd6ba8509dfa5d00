import { keepModeOnBadges, revealKeepingFocus } from '../../editing/focus';

/** A badge, with its button, under a cell's input. */
function badgeOf(cell: HTMLElement): HTMLElement {
  const badge = document.createElement('div');
  badge.className = 'jp-Crane-badge';
  badge.append(document.createElement('button'));
  cell.append(badge);
  return badge;
}

/** A notebook-like tree: root > notebook (listens for presses) > two cells, each with an editor
 * and a badge; the focus starts in the first cell's editor. */
function tree() {
  const root = document.createElement('div');
  const notebook = document.createElement('div');
  notebook.className = 'jp-Notebook';
  const cell = document.createElement('div');
  cell.className = 'jp-Cell';
  const editor = document.createElement('textarea');
  cell.append(editor);
  const badge = badgeOf(cell);
  const button = badge.querySelector('button')!;
  const other = document.createElement('div');
  other.className = 'jp-Cell';
  other.append(document.createElement('textarea'));
  const otherBadge = badgeOf(other);
  notebook.append(cell, other);
  const side = document.createElement('input');
  root.append(notebook, side);
  document.body.append(root);
  editor.focus();
  const seen: string[] = [];
  notebook.addEventListener('mousedown', () => seen.push('notebook'), true);
  notebook.addEventListener('mousedown', () => seen.push('notebook'));
  badge.addEventListener('click', () => seen.push('badge click'));
  return { root, notebook, editor, badge, button, otherBadge, side, seen };
}

function press(target: Element, button = 0): MouseEvent {
  const event = new MouseEvent('mousedown', {
    bubbles: true,
    cancelable: true,
    button
  });
  target.dispatchEvent(event);
  return event;
}

describe('keepModeOnBadges', () => {
  it('keeps a press on a badge from the notebook and the focus where it is; the click still arrives', () => {
    const t = tree();
    const keep = keepModeOnBadges(t.root);
    const event = press(t.button);
    expect(t.seen).toEqual([]);
    expect(event.defaultPrevented).toBe(true);
    t.button.click();
    expect(t.seen).toEqual(['badge click']);
    keep.dispose();
    t.root.remove();
  });

  it('lets other presses through: outside a badge, a right button, or once disposed', () => {
    const t = tree();
    const keep = keepModeOnBadges(t.root);
    expect(press(t.editor).defaultPrevented).toBe(false);
    expect(press(t.badge, 2).defaultPrevented).toBe(false);
    expect(t.seen).toEqual(['notebook', 'notebook', 'notebook', 'notebook']);
    keep.dispose();
    expect(keep.isDisposed).toBe(true);
    press(t.badge);
    expect(t.seen).toHaveLength(6);
    t.root.remove();
  });

  it("lets a press on another cell's badge through, so that cell becomes the active one", () => {
    const t = tree();
    const keep = keepModeOnBadges(t.root);
    expect(press(t.otherBadge).defaultPrevented).toBe(false);
    expect(t.seen).toEqual(['notebook', 'notebook']);
    keep.dispose();
    t.root.remove();
  });
});

describe('revealKeepingFocus', () => {
  it('gives the focus back to the notebook editor that had it', () => {
    const t = tree();
    t.editor.focus();
    revealKeepingFocus(() => t.side.focus());
    expect(document.activeElement).toBe(t.editor);
    t.root.remove();
  });

  it('leaves a focus outside notebooks where the reveal put it', () => {
    const t = tree();
    const palette = document.createElement('input');
    document.body.append(palette);
    palette.focus();
    revealKeepingFocus(() => t.side.focus());
    expect(document.activeElement).toBe(t.side);
    palette.remove();
    t.root.remove();
  });
});
