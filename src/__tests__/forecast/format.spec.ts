import {
  approx,
  formatKilobytes,
  formatMegabytes,
  formatRate,
  formatSeconds,
  isLong,
  isNotable,
  isTight
} from '../../forecast/format';
import { AT_LEAST, LONG, OUT_OF_MEMORY, SHORT, forecast } from './fixtures';

describe('formatSeconds', () => {
  it('says seconds, minutes and hours, to two figures', () => {
    expect(formatSeconds(0)).toBe('0 s');
    expect(formatSeconds(0.01)).toBe('under 0.1 s');
    expect(formatSeconds(0.4)).toBe('0.4 s');
    expect(formatSeconds(4.25)).toBe('4.3 s');
    expect(formatSeconds(42)).toBe('42 s');
    expect(formatSeconds(59.4)).toBe('59 s');
    expect(formatSeconds(59.6)).toBe('1 min');
    expect(formatSeconds(150)).toBe('2.5 min');
    expect(formatSeconds(300)).toBe('5 min');
    expect(formatSeconds(720)).toBe('12 min');
    expect(formatSeconds(1500)).toBe('25 min');
    expect(formatSeconds(3570)).toBe('1 h');
    expect(formatSeconds(5400)).toBe('1.5 h');
    expect(formatSeconds(108000)).toBe('30 h');
  });

  it('says a time per iteration to two significant figures', () => {
    expect(formatRate(0.0213)).toBe('0.021 s');
    expect(formatRate(1.44)).toBe('1.4 s');
    expect(formatRate(0.0004)).toBe('under 1 ms');
    expect(formatRate(0)).toBe('0 s');
    expect(formatRate(150)).toBe('2.5 min');
  });
});

describe('formatMegabytes', () => {
  it('says MB under a thousand, GB from there', () => {
    expect(formatMegabytes(0)).toBe('0 MB');
    expect(formatMegabytes(0.01)).toBe('under 0.1 MB');
    expect(formatMegabytes(0.5)).toBe('0.5 MB');
    expect(formatMegabytes(850)).toBe('850 MB');
    expect(formatMegabytes(999.6)).toBe('1 GB');
    expect(formatMegabytes(9728)).toBe('9.5 GB');
    expect(formatMegabytes(21504)).toBe('21 GB');
    expect(formatMegabytes(24576)).toBe('24 GB');
    expect(formatMegabytes(51200)).toBe('50 GB');
  });

  it('says kB per iteration, and MB or GB from a thousand', () => {
    expect(formatKilobytes(12)).toBe('12 kB');
    expect(formatKilobytes(0.01)).toBe('under 0.1 kB');
    expect(formatKilobytes(1024)).toBe('1 MB');
    expect(formatKilobytes(102400)).toBe('100 MB');
  });
});

describe('when a forecast is worth the badge', () => {
  it('is long from 30 s, tight from 80 % of the memory available', () => {
    expect(isLong(SHORT)).toBe(false);
    expect(isLong(forecast({ seconds: 30 }))).toBe(true);
    expect(isLong(forecast({ seconds: null }))).toBe(false);
    expect(isTight(SHORT)).toBe(false);
    expect(isTight(forecast({ peak_memory_mb: 19661 }))).toBe(true);
    expect(isTight(forecast({ peak_memory_mb: 19000 }))).toBe(false);
    expect(
      isTight(forecast({ peak_memory_mb: 20000, memory_available_mb: null }))
    ).toBe(false);
    expect(
      isTight(forecast({ gpu_peak_mb: 70000, gpu_available_mb: 81920 }))
    ).toBe(true);
    expect(isTight(OUT_OF_MEMORY)).toBe(true);
  });

  it('is notable when long or tight, never without a forecast', () => {
    expect(isNotable(null)).toBe(false);
    expect(isNotable(undefined)).toBe(false);
    expect(isNotable(SHORT)).toBe(false);
    expect(isNotable(LONG)).toBe(true);
    expect(isNotable(AT_LEAST)).toBe(true);
    expect(isNotable(OUT_OF_MEMORY)).toBe(true);
  });

  it('marks a projected number with "~", an observed one not', () => {
    expect(approx(LONG)).toBe('~');
    expect(approx(SHORT)).toBe('');
  });
});
