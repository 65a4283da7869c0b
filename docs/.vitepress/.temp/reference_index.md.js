import { ssrRenderAttrs } from "vue/server-renderer";
import { useSSRContext } from "vue";
import { _ as _export_sfc } from "./plugin-vue_export-helper.1tPrXgE0.js";
const __pageData = JSON.parse('{"title":"Reference","description":"","frontmatter":{},"headers":[],"relativePath":"reference/index.md","filePath":"reference/index.md"}');
const _sfc_main = { name: "reference/index.md" };
function _sfc_ssrRender(_ctx, _push, _parent, _attrs, $props, $setup, $data, $options) {
  _push(`<div${ssrRenderAttrs(_attrs)}><h1 id="reference" tabindex="-1">Reference <a class="header-anchor" href="#reference" aria-label="Permalink to &quot;Reference&quot;">​</a></h1><ul><li><a href="./agent-file">Agent files</a>: every field the loader accepts, generated from its own lists.</li><li><a href="./cli">The command line</a>: every command and its options, generated from the CLI&#39;s command table.</li><li><a href="./errors/">Error codes</a>: a page per code, what it means and what to do.</li><li><a href="/api/">API</a>: every public entry point of every package, generated from the JSDoc by TypeDoc.</li></ul></div>`);
}
const _sfc_setup = _sfc_main.setup;
_sfc_main.setup = (props, ctx) => {
  const ssrContext = useSSRContext();
  (ssrContext.modules || (ssrContext.modules = /* @__PURE__ */ new Set())).add("reference/index.md");
  return _sfc_setup ? _sfc_setup(props, ctx) : void 0;
};
const index = /* @__PURE__ */ _export_sfc(_sfc_main, [["ssrRender", _sfc_ssrRender]]);
export {
  __pageData,
  index as default
};
