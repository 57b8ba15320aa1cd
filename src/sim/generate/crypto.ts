import { CRYPTO, CRYPTO_YEARLY_HIGHS } from '../data.js';
import { DAY, HOUR, type WorldBuilder } from './builder.js';

/** Per asset: today's and tomorrow's close ladders, and the yearly-high strikes. */
export function crypto(b: WorldBuilder): void {
  const year = new Date(b.anchor).getUTCFullYear();
  for (const [name, code, spot, step] of CRYPTO) {
    for (let day = 0; day <= 1; day++) dailyLadder(b, name, code, spot, step, b.anchor + day * DAY + 22 * HOUR);
    const yEnd = Date.UTC(year + 1, 0, 1, 4, 59);
    const ev = b.event({ id: b.eventId(), category: 'crypto', title: `${name} yearly high ${year}`, startTime: yEnd, closeTime: yEnd, futures: true });
    for (const [mult, fair] of CRYPTO_YEARLY_HIGHS) {
      const line = Math.round((spot * mult) / step) * step;
      b.prop(
        ev,
        {
          marketClass: null,
          marketType: `${code.toLowerCase()}_max`,
          period: null,
          line,
          side: 'over',
          subject: name,
          statement: `${name} reaches $${line} by end of ${year}`,
          fair,
        },
        { kind: 'crypto_max', code, name },
      );
    }
  }
}

/** Five strikes around spot, `step` apart, for the close at `close`. */
function dailyLadder(b: WorldBuilder, name: string, code: string, spot: number, step: number, close: number): void {
  const ev = b.event({
    id: b.eventId(),
    category: 'crypto',
    title: `${name} price ${new Date(close).toISOString().slice(0, 10)}`,
    startTime: close,
    closeTime: close,
    futures: false,
  });
  for (let k = -2; k <= 2; k++) {
    const line = spot + k * step;
    b.prop(
      ev,
      {
        marketClass: null,
        marketType: `${code.toLowerCase()}_above`,
        period: null,
        line,
        side: 'over',
        subject: name,
        statement: `${name} above $${line} at ${new Date(close).toISOString()}`,
        fair: 5000 - k * 1800,
      },
      { kind: 'crypto_daily', code, name },
    );
  }
}
