import { ssrRenderAttrs } from "vue/server-renderer";
import { useSSRContext } from "vue";
import { _ as _export_sfc } from "./plugin-vue_export-helper.1tPrXgE0.js";
const __pageData = JSON.parse('{"title":"keel-workspace","description":"","frontmatter":{},"headers":[],"relativePath":"api/index.md","filePath":"api/index.md"}');
const _sfc_main = { name: "api/index.md" };
function _sfc_ssrRender(_ctx, _push, _parent, _attrs, $props, $setup, $data, $options) {
  _push(`<div${ssrRenderAttrs(_attrs)}><div><h1 id="keel-workspace" tabindex="-1">keel-workspace <a class="header-anchor" href="#keel-workspace" aria-label="Permalink to &quot;keel-workspace&quot;">​</a></h1><h2 id="modules" tabindex="-1">Modules <a class="header-anchor" href="#modules" aria-label="Permalink to &quot;Modules&quot;">​</a></h2><ul><li><a href="./agent-file/src">agent-file/src</a></li><li><a href="./ai-sdk/src">ai-sdk/src</a></li><li><a href="./anthropic/src">anthropic/src</a></li><li><a href="./chaos/src">chaos/src</a></li><li><a href="./cli/src">cli/src</a></li><li><a href="./core/src">core/src</a></li><li><a href="./core/src/adapter">core/src/adapter</a></li><li><a href="./core/src/http">core/src/http</a></li><li><a href="./core/src/process">core/src/process</a></li><li><a href="./core/src/store">core/src/store</a></li><li><a href="./core/src/testing">core/src/testing</a></li><li><a href="./dashboard/src">dashboard/src</a></li><li><a href="./logs/src">logs/src</a></li><li><a href="./mcp/src">mcp/src</a></li><li><a href="./openai/src">openai/src</a></li><li><a href="./otel/src">otel/src</a></li><li><a href="./prometheus/src">prometheus/src</a></li><li><a href="./redis/src">redis/src</a></li><li><a href="./simulated/src">simulated/src</a></li><li><a href="./store-postgres/src">store-postgres/src</a></li><li><a href="./store-sqlite/src">store-sqlite/src</a></li><li><a href="./telemetry/src">telemetry/src</a></li><li><a href="./tools/src">tools/src</a></li><li><a href="./worker/src">worker/src</a></li></ul></div></div>`);
}
const _sfc_setup = _sfc_main.setup;
_sfc_main.setup = (props, ctx) => {
  const ssrContext = useSSRContext();
  (ssrContext.modules || (ssrContext.modules = /* @__PURE__ */ new Set())).add("api/index.md");
  return _sfc_setup ? _sfc_setup(props, ctx) : void 0;
};
const index = /* @__PURE__ */ _export_sfc(_sfc_main, [["ssrRender", _sfc_ssrRender]]);
export {
  __pageData,
  index as default
};
