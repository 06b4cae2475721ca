// Writes the profile a Node.js user of onnxruntime-node gets with
// enableProfiling: node profile.js NODE_MODULES MODEL PREFIX RUNS
// (inputs: float32, dynamic sizes 1, images 64x64).
const path = require('path');
const ort = require(path.join(process.argv[2], 'onnxruntime-node'));
const [model, prefix, runs] = [process.argv[3], process.argv[4], Number(process.argv[5])];

(async () => {
  const s = await ort.InferenceSession.create(model, {enableProfiling: true, profileFilePrefix: prefix, intraOpNumThreads: 1});
  const dims = [1, 3, 64, 64];
  const x = new ort.Tensor('float32', new Float32Array(dims.reduce((a, b) => a * b)).map((_, i) => (i % 255) / 255), dims);
  for (let i = 0; i < runs; i++) await s.run({[s.inputNames[0]]: x});
  s.endProfiling();
  await s.release();
})().catch(e => { console.error(e); process.exit(1); });
