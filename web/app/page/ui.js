// The page's elements (web/index.html), by role.
const $ = (id) => document.getElementById(id);

export function pageElements() {
  return {
    app: $('app'), sentence: $('sentence'), tokens: $('tokens'), layer: $('layer'), head: $('head'), query: $('query'),
    causal: $('causal'), decimals: $('decimals'), tabs: [...document.querySelectorAll('[role=tab]')], view: $('view'),
    graphic: $('view-graphic'), stepsPane: $('view-steps'), stepsBody: $('steps-body'), help: $('view-help'), glossary: $('label-glossary'), glossaryText: $('label-glossary-text'), testHead: $('test-head'), headTest: $('head-test'),
    temperature: $('temperature'), temperatureValue: $('temperature-value'), topK: $('top-k'), sampling: $('sampling'),
    switchHead: $('switch-head'), ablatePanel: $('ablate-panel'), ablateHeads: $('ablate-heads'), ablate: $('ablate'),
    cross: $('cross'), crossCheck: $('cross-check'), second: $('second'), secondLabel: $('second-label'), crossNote: $('cross-note'),
    batch: $('batch'), batchCheck: $('batch-check'), batchWith: $('batch-with'), batchLabel: $('batch-label'), batchNote: $('batch-note'),
    pair: $('pair'), pairRow: $('pair-row'), typesLegend: $('types-legend'), bytesNote: $('bytes-note'),
    comparePane: $('view-compare'), sentences: $('sentences'), pooling: $('pooling'),
    // The side panels, by the view each shows (views/registry.js): the panel and what is drawn in it.
    panels: { next: { panel: $('next-panel'), body: $('next') }, fill: { panel: $('fill-panel'), body: $('fill') }, pronounce: { panel: $('pron-panel'), body: $('pron') } },
    seedPanel: $('seed-panel'), seedNotes: $('seed-notes'), seedReset: $('seed-reset'), twoHeads: $('dkdv'), twoHeadsCheck: $('dkdv-check'),
    modelInfo: $('model-info'), orientation: $('orientation'), sentenceHelp: $('sentence-help'), status: $('status'), presets: [...document.querySelectorAll('input[name=preset]')],
    sentenceLabel: $('sentence-label'), attend: $('attend'), attendLabel: $('attend-label'),
    marksLegend: $('marks-legend'), continueButton: $('continue'), stopButton: $('stop-generation'),
    exportSvg: $('export-svg'), exportPng: $('export-png'), exportJson: $('export-json'),
  };
}
