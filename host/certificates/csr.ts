// A PKCS#10 certificate signing request (RFC 2986) for the kubelet's certificates, with an ECDSA
// P-256 key as the kubelet makes them. Node's crypto makes keys and signatures but not requests;
// the request is a few DER structures, written here rather than pulling in an X.509 library.
import crypto from "node:crypto";
import net from "node:net";

/** DER: tag, length, contents. */
function der(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const n = body.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : n < 0x10000 ? Buffer.from([0x82, n >> 8, n & 0xff]) : Buffer.from([0x83, n >> 16, (n >> 8) & 0xff, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

const sequence = (...parts: Buffer[]) => der(0x30, ...parts);
const set = (...parts: Buffer[]) => der(0x31, ...parts);
const utf8 = (text: string) => der(0x0c, Buffer.from(text, "utf8"));
const octets = (bytes: Buffer) => der(0x04, bytes);
const bits = (bytes: Buffer) => der(0x03, Buffer.from([0]), bytes);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const bytes = [40 * a + b];
  for (const n of rest) {
    const base128 = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) base128.unshift((v & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return der(0x06, Buffer.from(bytes));
}

const OID = {
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  ecdsaWithSha256: "1.2.840.10045.4.3.2",
  extensionRequest: "1.2.840.113549.1.9.14",
  subjectAltName: "2.5.29.17",
};

export interface CsrSubject {
  commonName: string;
  organizations: string[];
  /** Subject alternative names (the serving certificate's). */
  dnsNames?: string[];
  ipAddresses?: string[];
}

function subjectName(s: CsrSubject): Buffer {
  // One attribute per RDN, organizations first, as Go's pkix.Name writes them.
  const rdns = [...s.organizations.map((o) => set(sequence(oid(OID.organization), utf8(o)))), set(sequence(oid(OID.commonName), utf8(s.commonName)))];
  return sequence(...rdns);
}

function ipBytes(ip: string): Buffer {
  if (net.isIPv4(ip)) return Buffer.from(ip.split(".").map(Number));
  const full = new URL(`http://[${ip}]`).hostname.slice(1, -1); // normalised
  const halves = full.split("::");
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]);
  const tail = halves.length > 1 ? groups(halves[1]) : [];
  const all = [...head, ...Array(8 - head.length - tail.length).fill("0"), ...tail];
  return Buffer.concat(all.map((g) => Buffer.from([parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff])));
}

function attributes(s: CsrSubject): Buffer {
  const names = [...(s.dnsNames ?? []).map((d) => der(0x82, Buffer.from(d, "ascii"))), ...(s.ipAddresses ?? []).map((ip) => der(0x87, ipBytes(ip)))];
  if (names.length === 0) return der(0xa0);
  const san = sequence(oid(OID.subjectAltName), octets(sequence(...names)));
  return der(0xa0, sequence(oid(OID.extensionRequest), set(sequence(san))));
}

export interface KeyAndRequest {
  /** The new private key, PEM ("EC PRIVATE KEY", SEC1, as the kubelet writes it). */
  keyPem: string;
  /** The request, PEM ("CERTIFICATE REQUEST"). */
  csrPem: string;
}

/** A new P-256 key and a request signed with it. */
export function newKeyAndRequest(subject: CsrSubject): KeyAndRequest {
  const { privateKey, publicKey } = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const spki = publicKey.export({ type: "spki", format: "der" });
  const info = sequence(der(0x02, Buffer.from([0])), subjectName(subject), spki, attributes(subject));
  const signature = crypto.sign("sha256", info, privateKey); // DER ECDSA-Sig-Value, as X.509 wants
  const request = sequence(info, sequence(oid(OID.ecdsaWithSha256)), bits(signature));
  const body = request.toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return {
    keyPem: privateKey.export({ type: "sec1", format: "pem" }).toString(),
    csrPem: `-----BEGIN CERTIFICATE REQUEST-----\n${body}\n-----END CERTIFICATE REQUEST-----\n`,
  };
}
