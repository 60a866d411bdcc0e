// Installs the test project for a run by hand: copies Queen's client tarball to .client/ (the path package.json and
// package-lock.json name) from beside the checkout (<root>/../shared/clients/) or from QUEEN_JS_CLIENT_TGZ, then runs
// `npm ci`. JsClientIT (JsClientProject) does the same from Java when the tests run under Maven.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFileSync } from 'node:child_process'

const TARBALL = 'queen-mq-1.0.6.tgz'
const project = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const beside = resolve(project, '../../..', 'shared/clients', TARBALL)
const fromEnv = process.env.QUEEN_JS_CLIENT_TGZ
const source = existsSync(beside) ? beside : (fromEnv && existsSync(fromEnv) ? resolve(fromEnv) : null)
if (!source) {
  console.error(`${TARBALL} is neither at ${beside} nor at QUEEN_JS_CLIENT_TGZ (${fromEnv || 'unset'})`)
  process.exit(1)
}
mkdirSync(join(project, '.client'), { recursive: true })
copyFileSync(source, join(project, '.client', TARBALL))
console.log(`using ${source}`)
execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: project, stdio: 'inherit' })
