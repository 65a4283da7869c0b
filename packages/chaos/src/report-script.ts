// The browser side of the HTML report: draws its charts with Chart.js from the embedded report. Plain ES2017 in a
// string, run by the page after Chart.js; kept free of backticks and `${` so that it can live in a template.

/** Draws the report's charts; reads `window.KEEL_CHAOS_REPORT`, sets `window.keelChaosCharts` to the count drawn. */
export const REPORT_SCRIPT = `
(function () {
  'use strict';
  var report = window.KEEL_CHAOS_REPORT;
  var palette = ['#2563eb', '#d97706', '#7c3aed', '#059669', '#dc2626', '#0891b2'];
  var outcomeColours = { ok: '#16a34a', faulted: '#f59e0b', down: '#dc2626' };
  var drawn = 0;
  Chart.defaults.animation = false;
  Chart.defaults.font.family = 'system-ui, sans-serif';

  var subjects = report.subjects.map(function (subject) { return subject.name; });
  var scenarios = report.scenarios.map(function (scenario) { return scenario.name; });
  function card(scenario, subject) {
    return report.scorecards.find(function (entry) { return entry.scenario === scenario && entry.subject === subject; });
  }
  function series(pick) {
    return subjects.map(function (subject, index) {
      return {
        label: subject,
        backgroundColor: palette[index % palette.length],
        data: scenarios.map(function (scenario) {
          var entry = card(scenario, subject);
          return entry === undefined || entry.skipped !== undefined ? null : pick(entry);
        }),
      };
    });
  }
  function bars(id, datasets, title, suggestedMax) {
    var canvas = document.getElementById(id);
    if (canvas === null) return;
    new Chart(canvas, {
      type: 'bar',
      data: { labels: scenarios, datasets: datasets },
      options: {
        responsive: false,
        plugins: { title: { display: true, text: title } },
        scales: { y: { beginAtZero: true, suggestedMax: suggestedMax } },
      },
    });
    drawn++;
  }

  bars('chart-completion', series(function (entry) { return Math.round(entry.completionRate * 1000) / 10; }),
    'runs completed (%)', 100);
  bars('chart-requests', series(function (entry) { return entry.requestsPerCompletedRun; }),
    'upstream requests per completed run');
  bars('chart-p99', series(function (entry) { return entry.durationMs.p99; }), 'p99 run time (ms)');

  // Outage windows drawn behind the bars: a shaded band per window, labelled with its model and fault.
  var windowBands = {
    id: 'windowBands',
    beforeDatasetsDraw: function (chart, args, options) {
      var x = chart.scales.x;
      var area = chart.chartArea;
      var context = chart.ctx;
      (options.windows || []).forEach(function (window) {
        var from = x.getPixelForValue(window.startMs / options.binMs - 0.5);
        var to = x.getPixelForValue(window.endMs / options.binMs - 0.5);
        context.save();
        context.fillStyle = 'rgba(220, 38, 38, 0.12)';
        context.fillRect(from, area.top, Math.max(1, to - from), area.bottom - area.top);
        context.fillStyle = '#991b1b';
        context.font = '11px system-ui, sans-serif';
        context.fillText(window.model + ' down (' + window.fault + ')', from + 4, area.top + 12);
        context.restore();
      });
    },
  };
  document.querySelectorAll('canvas[data-timeline]').forEach(function (canvas) {
    var entry = card(canvas.dataset.scenario, canvas.dataset.subject);
    if (entry === undefined) return;
    var timeline = entry.timeline;
    var labels = timeline.bins.map(function (bin) { return (bin.startMs / 1000).toFixed(2) + ' s'; });
    var dataset = function (key, label) {
      return { label: label, backgroundColor: outcomeColours[key], data: timeline.bins.map(function (bin) { return bin[key]; }) };
    };
    new Chart(canvas, {
      type: 'bar',
      data: {
        labels: labels,
        datasets: [dataset('ok', 'answered'), dataset('faulted', 'faulted'), dataset('down', 'sent to a model that was down')],
      },
      options: {
        responsive: false,
        plugins: {
          title: { display: true, text: entry.subject + ': upstream requests per ' + timeline.binMs + ' ms' },
          windowBands: { windows: timeline.windows, binMs: timeline.binMs },
        },
        scales: { x: { stacked: true, ticks: { maxTicksLimit: 12 } }, y: { stacked: true, beginAtZero: true } },
      },
      plugins: [windowBands],
    });
    drawn++;
  });
  window.keelChaosCharts = drawn;
})();
`;
