// A node:test reporter writing one JSON line per finished test: {outcome, name, nesting, message, stack}. JsClient2IT
// passes it as a second reporter (beside `spec`) and turns every top-level test of a file into a JUnit test, failing
// with the message the assertion gave.
export default async function * outcomes (source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue
    const { name, nesting, details } = event.data
    const line = { outcome: event.type === 'test:pass' ? 'pass' : 'fail', name, nesting }
    if (event.type === 'test:fail') {
      const error = details?.error?.cause ?? details?.error
      line.message = String(error?.message ?? error ?? 'failed')
      line.stack = String(error?.stack ?? '').split('\n').filter(l => l.includes('/clients-test/js2/')).join('\n')
    }
    yield JSON.stringify(line) + '\n'
  }
}
