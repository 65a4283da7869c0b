// The timeline section: the chart, what the store could not place in time, and every entry as a table row.
import { h, replace } from './dom.js';
import { figure } from './format.js';
import { drawTimeline } from './timeline-chart.js';

const TIMING_TEXT = { exact: 'stored time', step: 'placed by step', 'not-stored': 'time not stored' };

/** Fills `section` with `timeline`, reusing its chart canvas. */
export function renderTimeline(section, timeline) {
  const existing = section.querySelector('canvas');
  const canvas = existing ?? h('canvas', { 'aria-label': 'timeline chart', role: 'img' });
  if (!existing) {
    replace(
      section,
      h('h2', {}, 'Timeline'),
      h('div', { className: 'chart' }, canvas),
      h('ul', { className: 'notes' }),
      h('details', { className: 'timeline-details', open: true }, h('summary', {}, 'Entries'), h('div', {})),
    );
  }
  replace(
    section.querySelector('.notes'),
    timeline.notes.map((note) => h('li', {}, note)),
  );
  replace(
    section.querySelector('.timeline-details div'),
    h(
      'table',
      { className: 'timeline-entries' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['lane', 'what', 'step', 'from', 'to', 'timing'].map((name) => h('th', {}, name)),
        ),
      ),
      h(
        'tbody',
        {},
        timeline.entries.map((entry) =>
          h(
            'tr',
            { 'data-lane': entry.lane, 'data-timing': entry.timing },
            h('td', {}, entry.lane),
            h('td', {}, entry.label, entry.detail ? h('small', {}, ` ${entry.detail}`) : null),
            h('td', { className: 'number' }, figure(entry.step)),
            h('td', { className: 'number' }, `${Math.round(entry.startMs)} ms`),
            h('td', { className: 'number' }, `${Math.round(entry.endMs)} ms`),
            h('td', {}, TIMING_TEXT[entry.timing]),
          ),
        ),
      ),
    ),
  );
  drawTimeline(canvas, timeline);
}
