// Charts on uPlot (served from its WebJar). Every y axis starts at 0, so a small value never looks empty; time axes
// are the operator's local time, labelled with the zone.
import uPlot from '/assets/vendor/uplot/uPlot.esm.js';
import { fmtTime, zoneAt } from './ui.js';

const COLORS = ['#6b3fd4', '#12a4b8', '#137a3a', '#b42318', '#9a6700'];
const pad = (n) => String(n).padStart(2, '0');
const fromZero = (u, min, max) => [0, max > 0 ? max * 1.1 : 1];

/**
 * A line chart over the last `windowSeconds` up to now; set(data) replaces its uPlot data ([xs in epoch seconds,
 * ...one array per series]).
 */
export function timeChart(el, seriesNames, { width = 640, height = 220, windowSeconds = 3600, unit = '' } = {}) {
  const now = () => Date.now() / 1000;
  const hhmm = (t) => { const d = new Date(t * 1000); return `${pad(d.getHours())}:${pad(d.getMinutes())}`; };
  let data = [[], ...seriesNames.map(() => [])];
  const plot = new uPlot({
    width, height,
    scales: { x: { time: true, range: () => [now() - windowSeconds, now()] }, y: { range: fromZero } },
    series: [{ label: 'time', value: (u, v) => (v == null ? '—' : fmtTime(v * 1000)) },
      ...seriesNames.map((label, i) => ({ label, stroke: COLORS[i % COLORS.length], width: 1.5,
        points: { show: false }, value: (u, v) => (v == null ? '—' : v.toFixed(1)) }))],
    axes: [{ values: (u, ticks) => ticks.map(hhmm), label: `local time (${zoneAt()})`, labelSize: 20 },
      { size: 60, label: unit, labelSize: 20 }],
  }, data, el);
  el.__uplot = plot; // for tests and the console: the drawn data, scales and tick labels
  return {
    set(next) { data = next; plot.setData(next); },
    get data() { return data; },
    destroy() { plot.destroy(); },
  };
}

/** A bar chart of one series over categories, e.g. lag per partition. */
export function barChart(el, labels, values, { width = 640, height = 180, label = 'value' } = {}) {
  const xs = labels.map((_, i) => i);
  el.__uplot = new uPlot({
    width, height,
    series: [{}, { label, stroke: COLORS[0], fill: 'rgba(107,63,212,.15)', paths: uPlot.paths.bars({ size: [0.6] }) }],
    axes: [{ values: (u, ticks) => ticks.map((t) => labels[t] ?? '') }, { size: 60 }],
    scales: { x: { time: false, range: [-0.5, Math.max(0.5, labels.length - 0.5)] }, y: { range: fromZero } },
  }, [xs, values], el);
  return el.__uplot;
}
