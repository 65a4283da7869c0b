import { ssrRenderAttrs } from "vue/server-renderer";
import { useSSRContext } from "vue";
import { _ as _export_sfc } from "./plugin-vue_export-helper.1tPrXgE0.js";
const __pageData = JSON.parse('{"title":"guardrail.output","description":"","frontmatter":{},"headers":[],"relativePath":"reference/errors/guardrail.output.md","filePath":"reference/errors/guardrail.output.md"}');
const _sfc_main = { name: "reference/errors/guardrail.output.md" };
function _sfc_ssrRender(_ctx, _push, _parent, _attrs, $props, $setup, $data, $options) {
  _push(`<div${ssrRenderAttrs(_attrs)}><h1 id="guardrail-output" tabindex="-1"><code>guardrail.output</code> <a class="header-anchor" href="#guardrail-output" aria-label="Permalink to &quot;\`guardrail.output\`&quot;">​</a></h1><table tabindex="0"><thead><tr><th>category</th><th>retried by default</th></tr></thead><tbody><tr><td><code>guardrail</code></td><td>no</td></tr></tbody></table><h2 id="what-it-means" tabindex="-1">What it means <a class="header-anchor" href="#what-it-means" aria-label="Permalink to &quot;What it means&quot;">​</a></h2><p>An output guardrail withheld the final answer.</p><h2 id="what-to-do" tabindex="-1">What to do <a class="header-anchor" href="#what-to-do" aria-label="Permalink to &quot;What to do&quot;">​</a></h2><p>Look at the guardrail&#39;s trigger in the report; adjust the instructions or the guardrail.</p><p>Every error is a <code>KeelError</code>: <code>error.code</code> is this code, <code>error.retryable</code> says whether keel retries it, <code>error.data</code> holds typed details. See <a href="/concepts#errors-and-codes">errors and codes</a>.</p></div>`);
}
const _sfc_setup = _sfc_main.setup;
_sfc_main.setup = (props, ctx) => {
  const ssrContext = useSSRContext();
  (ssrContext.modules || (ssrContext.modules = /* @__PURE__ */ new Set())).add("reference/errors/guardrail.output.md");
  return _sfc_setup ? _sfc_setup(props, ctx) : void 0;
};
const guardrail_output = /* @__PURE__ */ _export_sfc(_sfc_main, [["ssrRender", _sfc_ssrRender]]);
export {
  __pageData,
  guardrail_output as default
};
