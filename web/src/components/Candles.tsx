import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Candle {
  readonly t: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
}

/**
 * A candle chart of a market's price in cents (uPlot). uPlot draws lines, not candles: the four
 * price series set the scale and draw nothing themselves, and a draw hook paints each candle's
 * wick and body, as uPlot's own candlestick demo does.
 */
export function Candles({ candles, label }: { candles: readonly Candle[]; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      candles.map((c) => c.t),
      candles.map((c) => c.open),
      candles.map((c) => c.high),
      candles.map((c) => c.low),
      candles.map((c) => c.close),
    ];
    const hidden = { paths: () => null, points: { show: false } };
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 260,
        title: undefined,
        scales: { x: { time: true } },
        legend: { show: true },
        axes: [{}, { values: (_u, vals) => vals.map((v) => `${v}¢`), size: 50 }],
        series: [{}, { label: 'open', ...hidden }, { label: 'high', ...hidden }, { label: 'low', ...hidden }, { label: 'close', ...hidden }],
        hooks: { draw: [drawCandles] },
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: 260 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [candles]);
  return <div class="chart" ref={box} role="img" aria-label={label} data-candles={candles.length} />;
}

function drawCandles(u: uPlot): void {
  const [ts, o, h, l, c] = u.data as unknown as number[][];
  if (!ts || !o || !h || !l || !c) return;
  const ctx = u.ctx;
  const n = ts.length;
  const span = n > 1 ? u.valToPos(ts[1]!, 'x', true) - u.valToPos(ts[0]!, 'x', true) : 12;
  const w = Math.max(1, Math.min(14 * devicePixelRatio, span * 0.6));
  ctx.save();
  for (let i = 0; i < n; i++) {
    const x = u.valToPos(ts[i]!, 'x', true);
    const yo = u.valToPos(o[i]!, 'y', true);
    const yc = u.valToPos(c[i]!, 'y', true);
    const up = c[i]! >= o[i]!;
    ctx.strokeStyle = ctx.fillStyle = up ? '#1a7f37' : '#cf222e';
    ctx.beginPath();
    ctx.moveTo(Math.round(x), u.valToPos(h[i]!, 'y', true));
    ctx.lineTo(Math.round(x), u.valToPos(l[i]!, 'y', true));
    ctx.stroke();
    ctx.fillRect(Math.round(x - w / 2), Math.min(yo, yc), w, Math.max(1, Math.abs(yc - yo)));
  }
  ctx.restore();
}
