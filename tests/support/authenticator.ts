/**
 * The software passkey, which the load tools use too and so lives in
 * `testing/`; kept here for the unit tests and the bench that import it by
 * this path.
 * @module
 */

export { type AssertOptions, SoftwarePasskey } from "../../testing/software_passkey.ts";
