import { ssrRenderAttrs } from "vue/server-renderer";
import { useSSRContext } from "vue";
import { _ as _export_sfc } from "./plugin-vue_export-helper.1tPrXgE0.js";
const __pageData = JSON.parse('{"title":"run.max_turns","description":"","frontmatter":{},"headers":[],"relativePath":"reference/errors/run.max_turns.md","filePath":"reference/errors/run.max_turns.md"}');
const _sfc_main = { name: "reference/errors/run.max_turns.md" };
function _sfc_ssrRender(_ctx, _push, _parent, _attrs, $props, $setup, $data, $options) {
  _push(`<div${ssrRenderAttrs(_attrs)}><h1 id="run-max-turns" tabindex="-1"><code>run.max_turns</code> <a class="header-anchor" href="#run-max-turns" aria-label="Permalink to &quot;\`run.max_turns\`&quot;">​</a></h1><table tabindex="0"><thead><tr><th>category</th><th>retried by default</th></tr></thead><tbody><tr><td><code>run</code></td><td>no</td></tr></tbody></table><h2 id="what-it-means" tabindex="-1">What it means <a class="header-anchor" href="#what-it-means" aria-label="Permalink to &quot;What it means&quot;">​</a></h2><p>The run took <code>limits.maxTurns</code> steps without a final answer.</p><h2 id="what-to-do" tabindex="-1">What to do <a class="header-anchor" href="#what-to-do" aria-label="Permalink to &quot;What to do&quot;">​</a></h2><p>Raise the limit or make the instructions clearer; look at the conversation for a loop.</p><p>Every error is a <code>KeelError</code>: <code>error.code</code> is this code, <code>error.retryable</code> says whether keel retries it, <code>error.data</code> holds typed details. See <a href="/concepts#errors-and-codes">errors and codes</a>.</p></div>`);
}
const _sfc_setup = _sfc_main.setup;
_sfc_main.setup = (props, ctx) => {
  const ssrContext = useSSRContext();
  (ssrContext.modules || (ssrContext.modules = /* @__PURE__ */ new Set())).add("reference/errors/run.max_turns.md");
  return _sfc_setup ? _sfc_setup(props, ctx) : void 0;
};
const run_max_turns = /* @__PURE__ */ _export_sfc(_sfc_main, [["ssrRender", _sfc_ssrRender]]);
export {
  __pageData,
  run_max_turns as default
};
