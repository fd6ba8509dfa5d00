import { Debouncer, Generations } from '../../editing/schedule';

describe('Debouncer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs once after the triggers stop for the delay', () => {
    const fn = jest.fn();
    const debouncer = new Debouncer(fn, 1000);
    debouncer.trigger();
    jest.advanceTimersByTime(600);
    debouncer.trigger(); // typing again restarts the quiet period
    jest.advanceTimersByTime(600);
    expect(fn).not.toHaveBeenCalled();
    expect(debouncer.pending).toBe(true);
    jest.advanceTimersByTime(400);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(debouncer.pending).toBe(false);
  });

  it('cancel forgets the call and flush runs it at once', () => {
    const fn = jest.fn();
    const debouncer = new Debouncer(fn, 500);
    debouncer.trigger();
    debouncer.cancel();
    jest.advanceTimersByTime(1000);
    expect(fn).not.toHaveBeenCalled();

    debouncer.trigger();
    debouncer.flush();
    expect(fn).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1000);
    expect(fn).toHaveBeenCalledTimes(1);
    debouncer.flush(); // nothing pending: no call
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('a new delay applies from the next trigger and is never negative', () => {
    const fn = jest.fn();
    const debouncer = new Debouncer(fn, 1000);
    debouncer.delay = 200;
    debouncer.trigger();
    jest.advanceTimersByTime(200);
    expect(fn).toHaveBeenCalledTimes(1);
    debouncer.delay = -5;
    expect(debouncer.delay).toBe(0);
  });
});

describe('Generations', () => {
  it('only the latest request of a key is current', () => {
    const gens = new Generations();
    const first = gens.next('cell-a');
    const second = gens.next('cell-a');
    expect(gens.isCurrent('cell-a', first)).toBe(false);
    expect(gens.isCurrent('cell-a', second)).toBe(true);
  });

  it('keys are independent', () => {
    const gens = new Generations();
    const a = gens.next('cell-a');
    const b = gens.next('cell-b');
    gens.next('cell-b');
    expect(gens.isCurrent('cell-a', a)).toBe(true);
    expect(gens.isCurrent('cell-b', b)).toBe(false);
  });

  it('drop invalidates the request in flight', () => {
    const gens = new Generations();
    const a = gens.next('cell-a');
    gens.drop('cell-a');
    expect(gens.isCurrent('cell-a', a)).toBe(false);
    expect(gens.isCurrent('unknown', 0)).toBe(false);
  });
});
