"""The HTML report's inline style sheet and script (the page loads nothing from anywhere)."""

# Status colours (Okabe-Ito based, told apart by line style too): read by both = green,
# only by the student = orange, only by the reference = blue, by neither = grey dashed.
STYLE = """
:root { --both: #1b7f4b; --both-bg: #dcf1e4; --student: #c55a00; --student-bg: #fde2c6;
        --reference: #1f5fbf; --reference-bg: #d8e6fb; --pruned: #8d8d8d; --pruned-bg: #f4f4f4;
        --fail: #b3261e; --ok: #1b7f4b; --ink: #1f2328; --muted: #5f6670; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1180px; padding: 18px 22px 40px; background: #fbfbfc; }
h1 { font-size: 22px; margin: 0 0 2px; } h2 { font-size: 18px; margin: 26px 0 8px; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 13px; }
.meta { color: var(--muted); margin: 0; }
.total { font-size: 20px; font-weight: 700; margin: 8px 0 0; }
.total.ok { color: var(--ok); } .total.fail { color: var(--fail); }
.total.graded { font-size: 16px; } .total.final { color: var(--ink); }
ul.adjustments { margin: 4px 0; padding-left: 20px; }
.toolbar { float: right; } .toolbar button { font: inherit; font-size: 13px; margin-left: 6px; cursor: pointer; }
table.score-table { border-collapse: collapse; min-width: 460px; background: #fff; }
.score-table th, .score-table td { padding: 4px 12px; border-bottom: 1px solid #e4e6ea; text-align: left; }
.score-table td.points { text-align: right; font-variant-numeric: tabular-nums; }
.score-table .bar { width: 180px; } .bar { background: #eceef1; border-radius: 5px; }
.bar span { display: block; height: 9px; border-radius: 5px; background: var(--ok); }
.kind.fail .bar span { background: var(--fail); } .kind .state { font-weight: 600; }
.kind.ok .state { color: var(--ok); } .kind.fail .state { color: var(--fail); }
.diagnoses ul, .failing ul { margin: 0; padding-left: 20px; }
.diagnosis { margin: 3px 0; } .diagnosis code { background: #fff3e6; padding: 1px 5px; border-radius: 4px; }
details.case { background: #fff; border: 1px solid #dfe2e6; border-left: 5px solid var(--ok);
               border-radius: 6px; margin: 10px 0; padding: 0 14px; }
details.case.failed { border-left-color: var(--fail); }
details.case.withheld { border-left-color: var(--pruned); }
details.case > summary { cursor: pointer; padding: 9px 0; font-weight: 600; list-style-position: outside; }
summary .points { float: right; font-weight: 400; color: var(--muted); font-variant-numeric: tabular-nums; }
.badge { display: inline-block; font-size: 12px; font-weight: 500; padding: 0 7px; margin-left: 5px;
         border-radius: 9px; background: #e7f4ec; color: var(--ok); }
.badge.failed { background: #fbe4e2; color: var(--fail); } .badge.withheld { background: #eee; color: var(--muted); }
.test { margin: 4px 0 10px; } .test h3 { font-size: 14px; margin: 6px 0 3px; }
.test.failed h3 { color: var(--fail); } .test.passed h3 { color: var(--ok); }
pre.output { background: #f6f7f9; border: 1px solid #e4e6ea; border-radius: 5px; padding: 8px 10px; margin: 0;
             white-space: pre-wrap; overflow-wrap: anywhere; max-height: 320px; overflow: auto; }
.withheld-note { color: var(--muted); font-style: italic; }
.counterexample { background: #fff; border: 1px solid #dfe2e6; border-left: 5px solid var(--student);
                  border-radius: 6px; margin: 10px 0; padding: 4px 14px 8px; }
.counterexample h3 { font-size: 14px; margin: 6px 0 6px; }
figure { margin: 10px 0 14px; } figcaption { color: var(--muted); font-size: 13px; }
.picture { overflow-x: auto; border: 1px solid #eceef1; border-radius: 5px; background: #fff; }
.root-line { margin: 4px 0 6px; } .root-line .wrong { color: var(--fail); font-weight: 600; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 6px 0 0; padding: 0; list-style: none;
          font-size: 13px; color: var(--muted); }
.legend li { display: flex; align-items: center; gap: 6px; }
.swatch { display: inline-block; width: 22px; height: 13px; border-radius: 4px; border: 2px solid; }
.swatch.both { background: var(--both-bg); border-color: var(--both); }
.swatch.student-only { background: var(--student-bg); border-color: var(--student); }
.swatch.reference-only { background: var(--reference-bg); border-color: var(--reference); border-style: dashed; }
.swatch.pruned { background: var(--pruned-bg); border-color: var(--pruned); border-style: dotted; }
.swatch.first-divergence { background: #fff; border: 3px solid var(--fail); }
svg.tree text { font: 12px ui-monospace, "DejaVu Sans Mono", Menlo, monospace; text-anchor: middle;
                paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
svg.tree text.role { text-anchor: start; font-weight: 700; fill: var(--muted); font-size: 11px; }
svg.tree text.window { font-size: 10px; fill: var(--muted); }
svg.tree text.leaf-value { font-weight: 700; }
svg.tree text.root-value { text-anchor: start; font-weight: 700; }
svg.tree text.root-value.wrong { fill: var(--fail); }
svg.tree text.divergence-label { text-anchor: start; font-size: 11px; fill: var(--fail); font-weight: 700; }
svg.tree .node text.name { stroke: none; }
.edge { stroke-width: 1.6; } .edge.both { stroke: var(--both); }
.edge.student-only { stroke: var(--student); stroke-width: 2.2; }
.edge.reference-only { stroke: var(--reference); stroke-dasharray: 5 3; }
.edge.pruned { stroke: #c4c4c4; stroke-dasharray: 2 3; }
.node .shape { stroke-width: 1.8; }
.node.both .shape { fill: var(--both-bg); stroke: var(--both); }
.node.student-only .shape { fill: var(--student-bg); stroke: var(--student); stroke-width: 2.4; }
.node.reference-only .shape { fill: var(--reference-bg); stroke: var(--reference); stroke-dasharray: 4 2; }
.node.pruned .shape { fill: var(--pruned-bg); stroke: var(--pruned); stroke-dasharray: 2 2; }
.node.pruned text { fill: #777; }
.node.collapsed .shape { fill: #ececec; }
.node .halo { fill: none; stroke: var(--fail); stroke-width: 2.5; }
.boards-note { margin: 6px 0; }
.board-row { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
.board-figure { margin: 0; text-align: center; } .board-figure figcaption { max-width: 200px; margin: 0 auto; }
svg.board .cell { fill: #fff; stroke: #9aa0a6; stroke-width: 1; }
svg.board .cell.differs { fill: #ffe9a8; }
svg.board .mark { fill: none; stroke-width: 2.6; stroke-linecap: round; }
svg.board .mark { stroke: var(--ink); }
.board-figure.student-only svg { outline: 3px solid var(--student); }
.board-figure.reference-only svg { outline: 3px dashed var(--reference); }
.board-figure.first-divergence figcaption { color: var(--fail); font-weight: 600; }
.board-figure svg { display: block; margin: 0 auto 3px; }
svg.connect4 .frame { fill: #2d5aa8; }
svg.connect4 .hole { fill: #fff; stroke: #1d3f7a; stroke-width: 1; }
svg.connect4 .disc { stroke-width: 1.4; }
svg.connect4 .disc.first { fill: #d7302b; stroke: #8e1712; }
svg.connect4 .disc.second { fill: #f6c624; stroke: #8a6a00; }
svg.connect4 text { font: 700 11px ui-monospace, "DejaVu Sans Mono", Menlo, monospace; text-anchor: middle; }
svg.connect4 text.stone.first { fill: #fff; } svg.connect4 text.stone.second { fill: #3b2f00; }
svg.connect4 text.column { fill: var(--muted); font-weight: 400; }
svg.connect4 .marked { fill: none; stroke: #111; stroke-width: 2.6; stroke-dasharray: 4 2; }
svg.nim .token { fill: #8a5a2b; stroke: #5a3715; stroke-width: 1; }
svg.nim .token.taken { fill: #fff; stroke: #8a5a2b; stroke-dasharray: 2 2; }
svg.nim .marked { fill: #ffe9a8; }
svg.nim text.to-move { font: 600 12px system-ui, sans-serif; fill: var(--muted); }
svg.nim text.heap-label { font: 12px ui-monospace, "DejaVu Sans Mono", Menlo, monospace; fill: var(--ink); }
.node.unobserved .shape { fill: #fff; stroke: #9aa0a6; }
.swatch.unobserved { background: #fff; border-color: #9aa0a6; }
.notes li { color: var(--muted); }
details.student-output { margin-top: 20px; } details.student-output summary { cursor: pointer; }
"""

# Two buttons open or close every case at once; a wide tree scrolls to its first divergence
# when its case is opened. The page works without the script.
SCRIPT = """
function setCases(open) { document.querySelectorAll('details.case').forEach(d => { d.open = open; }); }
function showDivergence(box) {
  const mark = box.querySelector('.first-divergence');
  if (!mark) return;
  const m = mark.getBoundingClientRect(), b = box.getBoundingClientRect();
  box.scrollLeft += m.left - b.left - b.width / 2;
}
window.addEventListener('load', () => {
  document.querySelectorAll('.picture').forEach(showDivergence);
  document.querySelectorAll('details.case').forEach(d => d.addEventListener('toggle', () => {
    if (d.open) d.querySelectorAll('.picture').forEach(showDivergence);
  }));
});
"""
