// Time-series charts on uPlot (served from its WebJar): a fixed window of points that slides as values arrive.
import uPlot from '/assets/vendor/uplot/uPlot.esm.js';

const COLORS = ['#6b3fd4', '#12a4b8', '#137a3a', '#b42318', '#9a6700'];

/** A live line chart; push(t, [values...]) appends a point per series. */
export function liveChart(el, seriesNames, { width = 640, height = 200, points = 90, windowSeconds = 180 } = {}) {
  const data = [[], ...seriesNames.map(() => [])];
  const plot = new uPlot({
    width, height,
    // a sliding window ending at the newest point, so a chart with few points still reads as "the last minutes"
    scales: { x: { range: (u, min, max) => [max - windowSeconds, max] } },
    series: [{}, ...seriesNames.map((label, i) => ({ label, stroke: COLORS[i % COLORS.length], width: 1.5 }))],
    axes: [{}, { size: 60 }],
  }, data, el);
  return {
    push(t, values) {
      data[0].push(t);
      values.forEach((v, i) => data[i + 1].push(v));
      if (data[0].length > points) data.forEach((s) => s.shift());
      plot.setData(data);
    },
    destroy() { plot.destroy(); },
  };
}

/** A bar-like chart of one series over categories (drawn as steps), e.g. lag per partition. */
export function barChart(el, labels, values, { width = 640, height = 180, label = 'value' } = {}) {
  const xs = labels.map((_, i) => i);
  return new uPlot({
    width, height,
    series: [{}, { label, stroke: COLORS[0], fill: 'rgba(107,63,212,.15)', paths: uPlot.paths.bars({ size: [0.6] }) }],
    axes: [{ values: (u, ticks) => ticks.map((t) => labels[t] ?? '') }, { size: 60 }],
    scales: { x: { time: false, range: [-0.5, Math.max(0.5, labels.length - 0.5)] } },
  }, [xs, values], el);
}
