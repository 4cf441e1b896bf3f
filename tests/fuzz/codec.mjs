// Fuzz inputs as JSON, with the values JSON lacks tagged: bigint, Uint8Array, undefined, -0, NaN
// and the infinities, so that a saved input replays exactly.
export function encode(value) {
  return JSON.stringify(value, function (key, v) {
    const raw = this[key];
    if (typeof raw === "bigint") return { $bigint: raw.toString() };
    if (raw instanceof Uint8Array) return { $bytes: Buffer.from(raw).toString("base64") };
    if (raw === undefined && key !== "") return { $undefined: true };
    if (typeof raw === "number" && !Number.isFinite(raw)) return { $number: String(raw) };
    if (Object.is(raw, -0)) return { $number: "-0" };
    return v;
  });
}

export function decode(text) {
  return JSON.parse(text, (_key, v) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      if ("$bigint" in v) return BigInt(v.$bigint);
      if ("$bytes" in v) return new Uint8Array(Buffer.from(v.$bytes, "base64"));
      if ("$undefined" in v) return undefined;
      if ("$number" in v) return Number(v.$number);
    }
    return v;
  });
}
