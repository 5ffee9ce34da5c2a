#!/usr/bin/env node
// Container healthcheck (the image has no curl): exits 0 when every URL answers 2xx within 3 s.
//   node infra/scripts/healthcheck.mjs http://127.0.0.1:3000/readyz [more URLs…]
const urls = process.argv.slice(2);
const answers = await Promise.all(
  urls.map((url) =>
    fetch(url, { signal: AbortSignal.timeout(3000) }).then(
      (res) => res.ok || `${url}: ${res.status}`,
      (error) => `${url}: ${error.message}`,
    ),
  ),
);
const failed = answers.filter((a) => a !== true);
for (const failure of failed) console.error(failure);
process.exit(urls.length > 0 && failed.length === 0 ? 0 : 1);
