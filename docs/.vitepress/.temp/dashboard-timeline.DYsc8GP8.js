const _imports_0 = "/assets/dashboard-runs.MGvgdSbn.png";
const _imports_1 = "/assets/dashboard-timeline.aQ5Yq2pT.png";
export {
  _imports_0 as _,
  _imports_1 as a
};
