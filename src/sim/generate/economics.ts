import { CPI_STRIKES, FED_OUTCOMES } from '../data.js';
import { DAY, type WorldBuilder } from './builder.js';

/** The next two FOMC decisions (the 17th of the next two months), one proposition per outcome. */
export function fedMeetings(b: WorldBuilder): void {
  for (let m = 1; m <= 2; m++) {
    const d = new Date(b.anchor);
    const meeting = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + m, 17, 18);
    const ev = b.event({
      id: b.eventId(),
      category: 'economics',
      title: `FOMC decision ${new Date(meeting).toISOString().slice(0, 7)}`,
      startTime: meeting,
      closeTime: meeting,
      futures: false,
    });
    for (const [code, kalshi, poly, fair] of FED_OUTCOMES) {
      b.prop(
        ev,
        {
          marketClass: null,
          marketType: 'fed_decision',
          period: null,
          line: null,
          side: null,
          subject: 'Federal Reserve',
          statement: `Fed: ${kalshi}`,
          fair,
        },
        { kind: 'fed', code, extra: { kalshi, poly } },
      );
    }
  }
}

/** Last month's CPI, released on the 12th: a ladder of year-over-year strikes. */
export function cpiRelease(b: WorldBuilder): void {
  const d = new Date(b.anchor);
  const month = (d.getUTCMonth() + 11) % 12;
  const y = month === 11 ? d.getUTCFullYear() - 1 : d.getUTCFullYear();
  const release = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 12, 12, 30) + (d.getUTCDate() > 12 ? 30 * DAY : 0);
  const ev = b.event({ id: b.eventId(), category: 'economics', title: `US CPI ${y}-${month + 1}`, startTime: release, closeTime: release, futures: false });
  for (const [line, fair] of CPI_STRIKES) {
    b.prop(
      ev,
      { marketClass: null, marketType: 'cpi_above', period: null, line, side: null, subject: 'CPI', statement: `CPI YoY above ${line}%`, fair },
      { kind: 'cpi', extra: { month, year: y } },
    );
  }
}
