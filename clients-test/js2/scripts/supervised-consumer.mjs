// A supervised consumer as an application runs one with Queen's 2.x client: a consume loop on a queue and consumer
// group, started with .supervision({group: app}), so it reports to the key-value namespace queen-supervisor (every
// 10 s, and a last "stopped" record when it ends) and the dashboard's Consumers page shows it.
//
//   QUEEN_URL=http://127.0.0.1:6632 node scripts/supervised-consumer.mjs <queue> <group> <app>
//
// (QUEUE, GROUP and APP in the environment work too.) It creates the queue, prints `consuming <queue> <group> <app>`
// once the loop runs, `handled <n>` after each message, and stops cleanly (aborting the loop's signal, which writes
// the stopped record) on SIGTERM, SIGINT, a line on stdin or stdin's end; then prints `stopped <n>` and exits 0.
// SupervisedConsumerPageIT drives it.
import { createInterface } from 'node:readline'
import { Queen } from 'queen-mq'

const [queue = process.env.QUEUE, group = process.env.GROUP, app = process.env.APP] = process.argv.slice(2)
if (!queue || !group || !app) {
  console.error('usage: QUEEN_URL=<url> node scripts/supervised-consumer.mjs <queue> <group> <app>')
  process.exit(2)
}
const url = (process.env.QUEEN_URL || 'http://127.0.0.1:6632').replace(/\/+$/, '')

// the signals are this script's to handle (abort, then the stopped record), not the client's
const queen = new Queen({ url, handleSignals: false, retryAttempts: 1, retryDelayMillis: 200 })
const controller = new AbortController()
const stop = () => controller.abort()
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
const stdin = createInterface({ input: process.stdin })
stdin.once('line', stop)
stdin.once('close', stop)

let handled = 0
try {
  await queen.queue(queue).create()
  const consumer = queen.queue(queue).group(group).subscriptionMode('all').concurrency(1).batch(1).timeoutMillis(500)
    .supervision({ group: app })
    .consume(async () => {
      handled += 1
      console.log(`handled ${handled}`)
    }, { signal: controller.signal })
  console.log(`consuming ${queue} ${group} ${app}`)
  await consumer // the loop runs while awaited and ends once the signal is aborted and the stopped record is written
  console.log(`stopped ${handled}`)
} finally {
  stdin.close()
  await queen.close()
}
