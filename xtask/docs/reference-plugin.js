// A Redocly plugin for the API reference pages (`cargo xtask docs`). Its decorator writes
// into each operation's description what the specs keep in extensions, which the
// renderer does not show on its own: the operation id (the name the SDKs, the
// simulator's journal and its fault rules use), whether a repeat is safe, and every
// business code the operation may answer with its meaning (the document's codes for
// every operation plus the operation's own, described by the `ErrorCode` schema).

/** The business codes of the document, each with its meaning. */
function catalogue(root) {
  const schema = root.components?.schemas?.ErrorCode;
  const meanings = new Map();
  (schema?.enum ?? []).forEach((code, i) => {
    meanings.set(String(code), schema["x-enum-descriptions"]?.[i] ?? "");
  });
  return { common: (root["x-error-codes"] ?? []).map(String), meanings };
}

function OperationFacts() {
  let codes = { common: [], meanings: new Map() };
  return {
    Root: {
      enter(root) {
        codes = catalogue(root);
      },
    },
    Operation: {
      leave(operation) {
        const lines = [`**Operation id:** \`${operation.operationId}\``];
        if (typeof operation["x-idempotent"] === "boolean") {
          const safe = operation["x-idempotent"] ? "yes" : "no";
          const why = operation["x-idempotent-reason"] ? ` — ${operation["x-idempotent-reason"]}` : "";
          lines.push(`**Safe to repeat:** ${safe}${why}`);
        }
        const own = (operation["x-error-codes"] ?? []).map(String);
        const all = [...new Set([...own, ...codes.common])];
        const parts = [lines.join("\n\n")];
        if (all.length > 0) {
          const partial = operation["x-partial-success-code"];
          const items = all.map((code) => {
            const note = String(partial) === code ? " (the reply still carries `data`)" : "";
            return `- \`${code}\`: ${codes.meanings.get(code) ?? "not described"}${note}`;
          });
          parts.push(["**Business codes** (HTTP 299, `code` in the reply):", "", ...items].join("\n"));
        }
        operation.description = [operation.description?.trimEnd(), ...parts].filter(Boolean).join("\n\n");
      },
    },
  };
}

export default function referencePlugin() {
  return {
    id: "reference",
    decorators: {
      oas3: {
        "operation-facts": OperationFacts,
      },
    },
  };
}
