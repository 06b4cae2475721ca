// A Node.js client of onnxruntime-node for attach's tests: it loads the
// package (and so ONNX Runtime), says "ready", then obeys one command per
// stdin line, answering one line each:
//
//   create MODEL     open a session on the Silero VAD model -> "created"
//   run N            run it N times, one after another -> "ran N MEDIAN_US P99_US"
//                    (the median and 99th percentile wall time of one
//                    session.run, in µs)
//   bad              one run with a wrong input shape -> "failed"
//   exit             leave
//
// Usage: node client.js NODE_MODULES_DIR
'use strict';
const path = require('path');
const readline = require('readline');
const ort = require(path.join(process.argv[2], 'onnxruntime-node'));

let session = null;
const frame = new Float32Array(512);
for (let i = 0; i < frame.length; i++) frame[i] = Math.sin(i / 10) * 0.1;
const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);

async function runOnce() {
  const feeds = {
    input: new ort.Tensor('float32', frame, [1, 512]),
    state: new ort.Tensor('float32', new Float32Array(256), [2, 1, 128]),
    sr,
  };
  return session.run(feeds);
}

async function handle(line) {
  const [cmd, arg] = line.trim().split(/\s+/);
  switch (cmd) {
    case 'create':
      session = await ort.InferenceSession.create(arg, { intraOpNumThreads: 1, interOpNumThreads: 1 });
      return 'created';
    case 'run': {
      const n = Number(arg);
      const times = new Array(n);
      for (let i = 0; i < n; i++) {
        const t0 = process.hrtime.bigint();
        await runOnce();
        times[i] = Number(process.hrtime.bigint() - t0) / 1000;
      }
      times.sort((a, b) => a - b);
      return `ran ${n} ${times[Math.floor(n / 2)].toFixed(2)} ${times[Math.min(n - 1, Math.floor(n * 0.99))].toFixed(2)}`;
    }
    case 'bad':
      try {
        await session.run({ input: new ort.Tensor('float32', frame, [2, 256, 1]), state: new ort.Tensor('float32', new Float32Array(256), [2, 1, 128]), sr });
        return 'ran';
      } catch (e) {
        return 'failed';
      }
    case 'exit':
      process.exit(0);
  }
  return `unknown command ${cmd}`;
}

const rl = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
rl.on('line', (line) => {
  queue = queue.then(() => handle(line)).then(
    (out) => process.stdout.write(out + '\n'),
    (err) => process.stdout.write('error ' + String(err.message || err).split('\n')[0] + '\n'));
});
rl.on('close', () => queue.then(() => process.exit(0)));
process.stdout.write('ready\n');
