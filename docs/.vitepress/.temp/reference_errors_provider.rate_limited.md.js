import { ssrRenderAttrs } from "vue/server-renderer";
import { useSSRContext } from "vue";
import { _ as _export_sfc } from "./plugin-vue_export-helper.1tPrXgE0.js";
const __pageData = JSON.parse('{"title":"provider.rate_limited","description":"","frontmatter":{},"headers":[],"relativePath":"reference/errors/provider.rate_limited.md","filePath":"reference/errors/provider.rate_limited.md"}');
const _sfc_main = { name: "reference/errors/provider.rate_limited.md" };
function _sfc_ssrRender(_ctx, _push, _parent, _attrs, $props, $setup, $data, $options) {
  _push(`<div${ssrRenderAttrs(_attrs)}><h1 id="provider-rate-limited" tabindex="-1"><code>provider.rate_limited</code> <a class="header-anchor" href="#provider-rate-limited" aria-label="Permalink to &quot;\`provider.rate_limited\`&quot;">​</a></h1><table tabindex="0"><thead><tr><th>category</th><th>retried by default</th></tr></thead><tbody><tr><td><code>provider</code></td><td>yes</td></tr></tbody></table><h2 id="what-it-means" tabindex="-1">What it means <a class="header-anchor" href="#what-it-means" aria-label="Permalink to &quot;What it means&quot;">​</a></h2><p>The provider answered 429 (or its rate-limit error): too many requests or tokens for now.</p><h2 id="what-to-do" tabindex="-1">What to do <a class="header-anchor" href="#what-to-do" aria-label="Permalink to &quot;What to do&quot;">​</a></h2><p>Nothing: keel waits for its Retry-After and retries within the run&#39;s budget, or falls back. If it persists, lower concurrency, add a fallback model, or raise your provider limits. A wait beyond <code>retry.maxRetryAfterMs</code> or the run&#39;s deadline is not waited for.</p><p>Every error is a <code>KeelError</code>: <code>error.code</code> is this code, <code>error.retryable</code> says whether keel retries it, <code>error.data</code> holds typed details. See <a href="/concepts#errors-and-codes">errors and codes</a>.</p></div>`);
}
const _sfc_setup = _sfc_main.setup;
_sfc_main.setup = (props, ctx) => {
  const ssrContext = useSSRContext();
  (ssrContext.modules || (ssrContext.modules = /* @__PURE__ */ new Set())).add("reference/errors/provider.rate_limited.md");
  return _sfc_setup ? _sfc_setup(props, ctx) : void 0;
};
const provider_rate_limited = /* @__PURE__ */ _export_sfc(_sfc_main, [["ssrRender", _sfc_ssrRender]]);
export {
  __pageData,
  provider_rate_limited as default
};
