// Node side of .ci/schemas.sh (run with NODE_PATH pointing at the installed node_modules).
//
//   node schema_check.cjs ajv SCHEMAS SAMPLES INVALID
//       Loads every schema of SCHEMAS/index.json into Ajv (draft 2020-12, ajv-formats,
//       strict mode with the schemas' `x-` and `tsType` keywords declared as annotations),
//       then checks:
//       each valid sample of SAMPLES/samples.json is accepted; each invalid sample
//       INVALID/<service>/<Schema>/<what-is-wrong>.<keyword>.json is rejected, with an
//       error of <keyword> among the reasons; each constraint of SAMPLES/constraints.json
//       is the reason an invalid sample is rejected at least once.
//   node schema_check.cjs ts-samples SAMPLES INVALID OUT
//       Writes TypeScript files that type samples with the types generated for their
//       schemas (OUT/../<service>/<Schema>.d.ts), for `tsc --noEmit --strict`:
//       OUT/valid_<service>_<Schema>_<n>.ts for each valid sample (must compile), and
//       OUT/invalid_<service>_<Schema>_<what>.ts for each invalid sample whose keyword a
//       TypeScript type can express (TS_CHECKED), under `// @ts-expect-error` (tsc fails
//       when the sample is not rejected); the known gaps (TS_KNOWN_GAPS) are written
//       without it, so tsc fails when one closes and the list must be updated.
//
// Prints one FAIL line per failed check and ends with `RESULT <passed> <failed>`.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) {
    passed += 1;
  } else {
    failed += 1;
    console.log(`FAIL ${what}`);
  }
  return ok;
}
/** A precondition: counted only when it fails. */
function precondition(ok, what) {
  return ok || check(false, what);
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));

/**
 * The non-standard keywords used anywhere in a schema: `x-` extensions and
 * json-schema-to-typescript's `tsType`, annotations only.
 */
function extensionKeywords(value, found = new Set()) {
  if (Array.isArray(value)) {
    value.forEach((v) => extensionKeywords(v, found));
  } else if (value && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) {
      if (key.startsWith("x-") || key === "tsType") found.add(key);
      extensionKeywords(v, found);
    }
  }
  return found;
}

/** Invalid sample files: [{service, schema, file, keyword}]. */
function invalidSamples(dir) {
  const samples = [];
  for (const service of fs.readdirSync(dir).sort()) {
    for (const schema of fs.readdirSync(path.join(dir, service)).sort()) {
      for (const name of fs.readdirSync(path.join(dir, service, schema)).sort()) {
        const match = /^[a-z0-9-]+\.([A-Za-z]+)\.json$/.exec(name);
        const file = path.join(dir, service, schema, name);
        if (!precondition(match, `${file}: name must be <what-is-wrong>.<keyword>.json`)) continue;
        samples.push({ service, schema, file, keyword: match[1] });
      }
    }
  }
  return samples;
}

/** The coverage key of an Ajv error: the constraint it reports, in its own schema file. */
function coverageKeys(service, schema, error) {
  if (error.keyword === "type") {
    return String(error.params.type)
      .split(",")
      .filter((t) => t !== "null")
      .map((t) => `${service}:type:${t}`);
  }
  // Inside a `$defs` entry the constraint belongs to that component's own file.
  const inDefs = /^#\/\$defs\/([^/]+)(\/.*)?$/.exec(error.schemaPath);
  return inDefs
    ? [`${service}/${inDefs[1]}#${inDefs[2] ?? ""}`]
    : [`${service}/${schema}${error.schemaPath}`];
}

function ajvChecks(schemasDir, samplesDir, invalidDir) {
  const Ajv2020 = require("ajv/dist/2020").default;
  const addFormats = require("ajv-formats").default;
  const index = readJson(path.join(schemasDir, "index.json"));
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);

  const ids = new Map();
  const schemas = index.schemas.map((entry) => readJson(path.join(schemasDir, entry.file)));
  const extensions = new Set();
  schemas.forEach((schema) => extensionKeywords(schema, extensions));
  for (const keyword of [...extensions].sort()) ajv.addKeyword({ keyword });
  index.schemas.forEach((entry, i) => {
    ajv.addSchema(schemas[i]);
    ids.set(`${entry.service}/${entry.name}`, entry.$id);
  });

  const validators = new Map();
  let compiled = 0;
  for (const entry of index.schemas) {
    let validate = null;
    try {
      validate = ajv.getSchema(entry.$id);
    } catch (error) {
      console.log(`  ${entry.file}: ${error.message}`);
    }
    if (check(validate, `ajv compiles ${entry.file}`)) compiled += 1;
    validators.set(`${entry.service}/${entry.name}`, validate);
  }

  let accepted = 0;
  for (const sample of readJson(path.join(samplesDir, "samples.json"))) {
    const validate = validators.get(`${sample.service}/${sample.schema}`);
    const ok = validate && validate(readJson(path.join(samplesDir, sample.file)));
    if (!check(ok, `ajv accepts ${sample.file} (${sample.source})`) && validate) {
      console.log(`  ${JSON.stringify(validate.errors)}`);
    }
    if (ok) accepted += 1;
  }

  const covered = new Set();
  let rejected = 0;
  for (const sample of invalidSamples(invalidDir)) {
    const validate = validators.get(`${sample.service}/${sample.schema}`);
    if (!precondition(validate, `${sample.file}: no schema ${sample.service}/${sample.schema}`)) continue;
    const ok = !validate(readJson(sample.file));
    const errors = validate.errors ?? [];
    const reasons = errors.filter((e) => e.keyword === sample.keyword);
    if (!check(ok && reasons.length > 0, `ajv rejects ${sample.file} for \`${sample.keyword}\``)) {
      console.log(`  ${ok ? JSON.stringify(errors) : "accepted"}`);
      continue;
    }
    rejected += 1;
    // An error inside a `oneOf` branch says nothing about the branch's own constraints.
    for (const error of reasons.filter((e) => !/\/oneOf\/\d+\//.test(e.schemaPath))) {
      coverageKeys(sample.service, sample.schema, error).forEach((k) => covered.add(k));
    }
  }

  const constraints = readJson(path.join(samplesDir, "constraints.json"));
  let hit = 0;
  for (const c of constraints) {
    const key = c.keyword === "type"
      ? `${c.service}:type:${c.type}`
      : `${c.service}/${c.schema}${c.pointer}`;
    const where = c.keyword === "type" ? `instance not of type ${c.type}` : `${c.schema}.json ${c.pointer}`;
    if (check(covered.has(key), `${c.service}: no invalid sample is rejected for \`${c.keyword}\` (${where})`)) {
      hit += 1;
    }
  }
  console.log(
    `ajv: ${compiled}/${index.schemas.length} schemas compile, ${accepted} valid samples accepted, ` +
      `${rejected} invalid samples rejected, ${hit}/${constraints.length} constraints covered`,
  );
}

/** The invalid samples' keywords that generated TypeScript types can reject. */
const TS_CHECKED = new Set(["type", "enum", "required", "oneOf", "additionalProperties"]);

/** Invalid samples that the generated TypeScript types accept, and why. */
const TS_KNOWN_GAPS = {
  "order/AllocateShellNumsRequest/size-fraction.type.json": "`integer` is `number`",
  "member/ProductInstanceId/fraction.oneOf.json": "`integer` is `number`",
  "member/ReplyCode/fraction.oneOf.json": "`integer` is `number`",
};

function tsModule(comment, service, schema, value, expectError) {
  return [
    `// ${comment}`,
    `import type { ${schema} } from "../${service}/${schema}";`,
    // One line, so that @ts-expect-error covers every error the literal raises.
    ...(expectError ? ["// @ts-expect-error the sample breaks the schema"] : []),
    `const sample: ${schema} = ${JSON.stringify(value)};`,
    "export default sample;",
    "",
  ].join("\n");
}

function tsSamples(samplesDir, invalidDir, outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  let valid = 0;
  for (const sample of readJson(path.join(samplesDir, "samples.json"))) {
    const n = path.basename(sample.file, ".json");
    const value = readJson(path.join(samplesDir, sample.file));
    const source = tsModule(sample.source, sample.service, sample.schema, value, false);
    fs.writeFileSync(path.join(outDir, `valid_${sample.service}_${sample.schema}_${n}.ts`), source);
    valid += 1;
  }
  let invalid = 0;
  let gaps = 0;
  let unchecked = 0;
  for (const sample of invalidSamples(invalidDir)) {
    const relative = path.relative(invalidDir, sample.file).split(path.sep).join("/");
    const gap = TS_KNOWN_GAPS[relative];
    if (!TS_CHECKED.has(sample.keyword)) {
      unchecked += 1;
      continue;
    }
    const what = path.basename(sample.file, ".json").replaceAll(".", "_").replaceAll("-", "_");
    const source = tsModule(
      gap ? `${relative}: known gap, ${gap}` : relative,
      sample.service,
      sample.schema,
      readJson(sample.file),
      !gap,
    );
    fs.writeFileSync(path.join(outDir, `invalid_${sample.service}_${sample.schema}_${what}.ts`), source);
    if (gap) gaps += 1;
    else invalid += 1;
  }
  console.log(
    `wrote ${valid} valid and ${invalid} invalid TypeScript samples, ${gaps} known gaps ` +
      `(${unchecked} invalid samples break constraints TypeScript types do not express)`,
  );
}

const [command, ...args] = process.argv.slice(2);
if (command === "ajv" && args.length === 3) {
  ajvChecks(...args);
  console.log(`RESULT ${passed} ${failed}`);
} else if (command === "ts-samples" && args.length === 3) {
  tsSamples(...args);
} else {
  console.error("usage: schema_check.cjs ajv SCHEMAS SAMPLES INVALID | ts-samples SAMPLES INVALID OUT");
  process.exit(2);
}
