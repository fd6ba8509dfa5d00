/**
 * Opening the panel from a badge keeps the notebook as it was: in edit mode, with the cursor in the
 * cell. The notebook switches to command mode on any mouse press in a cell outside its editor, and a
 * press on a badge (part of the cell) would also move the focus out of the editor.
 */
import type { IDisposable } from '@lumino/disposable';

/** The selector of the badges under the cells' inputs (see `CellBadge`). */
export const BADGE_SELECTOR = '.jp-Crane-badge';
const CELL_SELECTOR = '.jp-Cell';

/**
 * Stop a main-button press on a badge under `root` before the notebook sees it (it is caught on the
 * way down, before the notebook's own handlers), and keep the focus where it is, when the focus is in
 * the badge's cell: that cell is active already, so the press would only change the mode. A press on
 * the badge of another cell goes through, to make that cell (and its notebook) the active one whose
 * diagnosis the panel shows. The click that follows still reaches the badge; other buttons (the
 * context menu) and keyboard focus are untouched.
 */
export function keepModeOnBadges(root: HTMLElement): IDisposable {
  const onMouseDown = (event: MouseEvent) => {
    const target = event.target as Element | null;
    const cell = target?.closest?.(BADGE_SELECTOR)?.closest(CELL_SELECTOR);
    if (event.button === 0 && cell?.contains(document.activeElement)) {
      event.stopPropagation();
      event.preventDefault();
    }
  };
  root.addEventListener('mousedown', onMouseDown, true);
  let disposed = false;
  return {
    get isDisposed() {
      return disposed;
    },
    dispose() {
      if (!disposed) {
        disposed = true;
        root.removeEventListener('mousedown', onMouseDown, true);
      }
    }
  };
}

/**
 * Run `reveal` (activate a side panel) and give the focus back to the notebook element that had it,
 * so that a notebook in edit mode stays in it. Focus elsewhere (the command palette) is left alone.
 */
export function revealKeepingFocus(reveal: () => void): void {
  const before = document.activeElement;
  reveal();
  if (
    before instanceof HTMLElement &&
    before !== document.activeElement &&
    before.isConnected &&
    before.closest('.jp-Notebook')
  ) {
    before.focus({ preventScroll: true });
  }
}
