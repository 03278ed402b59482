// A minimal line chart on a <canvas>: a few series over the same time axis, a light grid and the
// y-axis maximum. Enough for live stats; no chart library needed.

const GRID_LINES = 4;

/**
 * Draws the series into the canvas, sized to its CSS box at the device pixel ratio.
 * @param {HTMLCanvasElement} canvas
 * @param {{color: string, values: (number|null)[], dash?: number[]}[]} series  values oldest first; null
 *   leaves a gap; dash draws the line dashed (so that two series that coincide both stay visible)
 * @param {{points?: number, unit?: string, minMax?: number}} [opts]
 *   points: how many samples the x axis spans; minMax: the y axis never shrinks below this
 */
export function drawChart(canvas, series, { points = 60, unit = '', minMax = 1 } = {}) {
  const ctx = fitToBox(canvas);
  const { width: w, height: h } = canvas.getBoundingClientRect();
  const pad = { top: 8, right: 8, bottom: 6, left: 40 };
  const plotW = w - pad.left - pad.right;
  const plotH = h - pad.top - pad.bottom;
  const yMax = niceCeiling(Math.max(minMax, ...series.flatMap((s) => s.values.filter((v) => v != null))));

  ctx.clearRect(0, 0, w, h);
  const style = getComputedStyle(canvas);
  drawGrid(ctx, pad, plotW, plotH, yMax, unit, {
    grid: style.getPropertyValue('--chart-grid').trim() || '#e5e7eb',
    text: style.getPropertyValue('--chart-text').trim() || '#6b7280',
  });

  const x = (i, n) => pad.left + plotW - ((n - 1 - i) * plotW) / (points - 1);
  const y = (v) => pad.top + plotH - (Math.min(v, yMax) / yMax) * plotH;
  for (const s of series) {
    const values = s.values.slice(-points);
    ctx.strokeStyle = s.color;
    ctx.lineWidth = 2;
    ctx.lineJoin = 'round';
    ctx.setLineDash(s.dash ?? []);
    ctx.beginPath();
    let penDown = false;
    values.forEach((v, i) => {
      if (v == null) {
        penDown = false;
        return;
      }
      if (penDown) ctx.lineTo(x(i, values.length), y(v));
      else ctx.moveTo(x(i, values.length), y(v));
      penDown = true;
    });
    ctx.stroke();
  }
  ctx.setLineDash([]);
}

function drawGrid(ctx, pad, plotW, plotH, yMax, unit, colors) {
  ctx.strokeStyle = colors.grid;
  ctx.fillStyle = colors.text;
  ctx.lineWidth = 1;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let i = 0; i <= GRID_LINES; i++) {
    const gy = Math.round(pad.top + (plotH * i) / GRID_LINES) + 0.5;
    ctx.beginPath();
    ctx.moveTo(pad.left, gy);
    ctx.lineTo(pad.left + plotW, gy);
    ctx.stroke();
    if (i % 2 === 0) ctx.fillText(formatTick(yMax * (1 - i / GRID_LINES), unit), pad.left - 6, gy);
  }
}

/** Scales the backing store to the device pixel ratio so lines stay sharp. */
function fitToBox(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const { width, height } = canvas.getBoundingClientRect();
  const bw = Math.round(width * ratio);
  const bh = Math.round(height * ratio);
  if (canvas.width !== bw || canvas.height !== bh) {
    canvas.width = bw;
    canvas.height = bh;
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return ctx;
}

/** Rounds up to 1, 2 or 5 times a power of ten, so axis labels stay readable. */
function niceCeiling(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function formatTick(v, unit) {
  const text = v >= 1000 ? `${+(v / 1000).toFixed(1)}k` : `${+v.toFixed(v < 10 ? 1 : 0)}`;
  return unit ? `${text}${unit}` : text;
}
