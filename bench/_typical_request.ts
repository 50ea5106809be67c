/**
 * The request the benchmarks measure: a signed Variant B intent under a
 * policy, as the load generator sends it (its signature not a valid one).
 * @module
 */

/** The policy it names. */
export const TYPICAL_POLICY = "6HfDFDHLuS37kEwwzDq39utSWPkKriY1GkFC184uYXB";
/** The signer's key. */
export const TYPICAL_SIGNER = "8Fk1nYtQx2yqSgdzv1Q5Xc3iYsT3B1v9oTQ7cq8mJ1Lb";

/** The request's value, with intent id `id` and an invoice reference. */
export function typicalRequest(id: string, reference = "invoice 2025-0042") {
  return {
    authorship: { Signed: { Ed25519: { pub_key: TYPICAL_SIGNER, signature: "4".repeat(88) } } },
    intent: {
      id,
      policy_id: TYPICAL_POLICY,
      attrs: { fields: { amount: "1250.00", currency: "EUR", reference } },
    },
  };
}
