/**
 * Intent ids (docs/interface.md §3): Variant B's are UUIDs, and UUID ids are
 * stored lower-cased in both variants.
 * @module
 */

/**
 * An intent id in UUID text form: any version, either case. Written without
 * flags so that the OpenAPI document can publish it as it is.
 *
 * @example
 * ```ts
 * UUID_PATTERN.test("0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B"); // true
 * ```
 */
export const UUID_PATTERN: RegExp =
  /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
