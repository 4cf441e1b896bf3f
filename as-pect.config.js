// as-pect runs the core's unit tests (tests/core/*.spec.ts) on the core's own modules, without
// the component wrapper: they import assembly/core/* directly, which needs no WIT imports.
export default {
  entries: ["tests/core/**/*.spec.ts"],
  include: ["tests/core/**/*.include.ts"],
  disclude: [/node_modules/],
  async instantiate(memory, createImports, instantiate, binary) {
    return instantiate(binary, createImports({ env: { memory } }));
  },
  outputBinary: false,
};
