// Validates a .glb with the Khronos glTF validator (npm package gltf-validator, found through NODE_PATH).
// Usage: node gltf_validate.js FILE.glb — prints the validator's issue summary and messages; exit 0 when the
// report has no errors and no warnings, 1 otherwise, 2 when the validator cannot be loaded.
'use strict';
const fs = require('fs');
let validator;
try {
  validator = require('gltf-validator');
} catch (e) {
  console.error('gltf-validator is not installed (NODE_PATH=' + (process.env.NODE_PATH || '') +
                '): run scripts/install-deps.sh');
  process.exit(2);
}
const file = process.argv[2];
const bytes = new Uint8Array(fs.readFileSync(file));
validator.validateBytes(bytes, {uri: file, maxIssues: 200}).then((report) => {
  const i = report.issues;
  console.log(`gltf-validator ${report.validatorVersion}: ${i.numErrors} errors, ${i.numWarnings} warnings, ` +
              `${i.numInfos} infos, ${i.numHints} hints`);
  for (const m of i.messages) console.log(`  [${m.severity}] ${m.code} ${m.pointer || ''}: ${m.message}`);
  const info = report.info || {};
  console.log(`  drawCallCount=${info.drawCallCount} totalVertexCount=${info.totalVertexCount}`);
  process.exit(i.numErrors === 0 && i.numWarnings === 0 ? 0 : 1);
}, (err) => {
  console.error('validation failed: ' + err);
  process.exit(1);
});
