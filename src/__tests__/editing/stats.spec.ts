import { SessionStats } from '../../editing/stats';

/** A kernel session in which cells a, b, c ran for 1 s, 2 s and 4 s. */
function session(): SessionStats {
  const stats = new SessionStats();
  stats.ran('a', 'import pandas', 1000, false);
  stats.ran('b', 'df = load()', 2000, false);
  stats.ran('c', 'model.fit(df)', 4000, false);
  return stats;
}

describe('SessionStats', () => {
  it('counts a warned cell that was edited and then ran without error as a caught crash', () => {
    const stats = session();
    stats.warned('d', "df['Agee'].mean()", 'predicted');
    expect(stats.ran('d', "df['Age'].mean()", 30, false)).toBe('caught');
    expect(stats.figures.caught).toEqual({ observed: 0, predicted: 1 });
    // A restart would have re-run a, b and c.
    expect(stats.figures.savedMs).toBe(7000);
  });

  it('counts each warned text of a cell once, however often it was checked', () => {
    const stats = session();
    stats.warned('d', "df['Agee'].mean()", 'predicted');
    stats.warned('d', "df['Agee'].mean()", 'observed'); // checked again: the same warning
    expect(stats.figures.warnings).toBe(1);
    stats.warned('d', "df['Agee'].sum()", 'predicted');
    stats.warned('e', "df['Agee'].sum()", 'predicted');
    expect(stats.figures.warnings).toBe(3);
    // Confirmed by the run of the very text: a right warning, counted as such.
    expect(stats.ran('e', "df['Agee'].sum()", 5, true)).toBe('confirmed');
    expect(stats.figures).toMatchObject({ warnings: 3, confirmed: 1 });
  });

  it('keeps observed and predicted apart', () => {
    const stats = session();
    stats.warned('d', 'x', 'observed');
    stats.ran('d', 'y', 10, false);
    expect(stats.figures.caught).toEqual({ observed: 1, predicted: 0 });
  });

  it('counts the last run time of each cell once, and not the fixed cell itself', () => {
    const stats = session();
    stats.ran('b', 'df = load()', 500, false);
    stats.ran('d', 'first try', 9000, false);
    stats.warned('d', 'second try', 'predicted');
    stats.ran('d', 'third try', 100, false);
    expect(stats.figures.savedMs).toBe(1000 + 500 + 4000);
  });

  it('confirms a warning when the unchanged cell crashes, and saves nothing', () => {
    const stats = session();
    stats.warned('d', "df['Agee']", 'predicted');
    expect(stats.ran('d', "df['Agee']", 10, true)).toBe('confirmed');
    expect(stats.figures.confirmed).toBe(1);
    expect(stats.figures.caught.predicted).toBe(0);
    expect(stats.figures.savedMs).toBe(0);
  });

  it('counts nothing for a false alarm or a fix that still crashes', () => {
    const stats = session();
    stats.warned('d', 'x', 'predicted');
    expect(stats.ran('d', 'x', 10, false)).toBe('false-alarm');
    stats.warned('e', 'y', 'predicted');
    expect(stats.ran('e', 'y2', 10, true)).toBe('none');
    expect(stats.figures.caught.predicted).toBe(0);
    // The warning is spent: a later run of the same cell counts nothing.
    expect(stats.ran('e', 'y3', 10, false)).toBe('none');
  });

  it('counts a warned cell that was not run: deleted, or the kernel restarted first', () => {
    const stats = session();
    stats.warned('d', 'x', 'predicted');
    stats.warned('e', 'y', 'observed');
    stats.deleted('d');
    expect(stats.figures.caught.predicted).toBe(1);
    expect(stats.figures.savedMs).toBe(7000);
    stats.kernelReset();
    expect(stats.figures.caught.observed).toBe(1);
    expect(stats.figures.savedMs).toBe(14000);
    // The restart emptied the kernel: nothing would need a re-run now.
    expect(stats.rerunCostMs()).toBe(0);
    stats.deleted('zzz');
    expect(stats.figures.caught.predicted).toBe(1);
  });

  it('counts checks and misses, and signals each change', () => {
    const stats = new SessionStats();
    let changes = 0;
    stats.changed.connect(() => changes++);
    stats.checked();
    stats.checked();
    stats.missed();
    expect(stats.figures.checks).toBe(2);
    expect(stats.figures.missed).toBe(1);
    expect(changes).toBe(3);
    stats.dispose();
  });
});
