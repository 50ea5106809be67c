/**
 * A throwaway certificate authority and a server certificate it issued,
 * made with openssl, for HTTPS receivers in tests and measurements: the
 * service trusts the authority through `DENO_CERT` (a process) or
 * `caCerts` (one `deliverOnce`).
 *
 * ```ts
 * const certs = await makeCertificates("localhost");
 * Deno.serve({ cert: certs.cert, key: certs.key, port: 0 }, handler);
 * // spawn the server with DENO_CERT=certs.caFile; remove certs.dir afterwards
 * ```
 * @module
 */

const OPENSSL_FOUND = await new Deno.Command("openssl", {
  args: ["version"],
  stdout: "null",
  stderr: "null",
}).output().then((o) => o.success, () => false);

/**
 * Whether the tests that make certificates run: where `openssl` is found,
 * and always with `CI` set, where a missing one fails them rather than
 * leaving the HTTPS paths untested.
 */
export const HAS_OPENSSL: boolean = OPENSSL_FOUND || Boolean(Deno.env.get("CI"));
if (!HAS_OPENSSL) console.warn("HTTPS tests ignored: openssl not found");

/** What {@link makeCertificates} made. */
export interface TestCertificates {
  /** The temporary directory holding the files; the caller removes it. */
  dir: string;
  /** The authority's certificate (PEM), and the file holding it. */
  ca: string;
  caFile: string;
  /** The server's certificate and key (PEM). */
  cert: string;
  key: string;
}

/**
 * A certificate authority and a certificate it issued for the DNS name
 * `name` (P-256, valid one day), in a new temporary directory.
 *
 * @throws {Error} with openssl's message when a step fails.
 */
export async function makeCertificates(name: string): Promise<TestCertificates> {
  const dir = await Deno.makeTempDir({ prefix: "webhook-tls-" });
  const run = async (...args: string[]) => {
    const { success, stderr } = await new Deno.Command("openssl", {
      args,
      cwd: dir,
      stdout: "null",
    }).output();
    if (!success) throw new Error(`openssl ${args[0]}: ${new TextDecoder().decode(stderr)}`);
  };
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  const day = ["-days", "1"];
  await run(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    ...day,
    "-subj",
    "/CN=Test CA",
  );
  await run("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", `/CN=${name}`);
  await Deno.writeTextFile(
    `${dir}/server.ext`,
    `subjectAltName=DNS:${name}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  await run(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    ...day,
    "-extfile",
    "server.ext",
  );
  const read = (file: string) => Deno.readTextFile(`${dir}/${file}`);
  return {
    dir,
    ca: await read("ca.pem"),
    caFile: `${dir}/ca.pem`,
    cert: await read("server.pem"),
    key: await read("server.key"),
  };
}
