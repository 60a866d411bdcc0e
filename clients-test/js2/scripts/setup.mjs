// Installs the test project for a run by hand: `npm ci`, which takes Queen's client from the repository's own copy
// (../vendor/queen-mq-2.0.3.tgz, named by package.json and package-lock.json). JsClient2IT (JsClientProject) does the
// same from Java when the tests run under Maven.
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFileSync } from 'node:child_process'

const project = resolve(dirname(fileURLToPath(import.meta.url)), '..')
execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: project, stdio: 'inherit' })
