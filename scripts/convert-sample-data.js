// Converts the npm sample packages to the files Trainyard's tools read.
// usage: node convert-sample-data.js FIXTURES_DIR VOCAB_JSON OUT_DIR
// Writes via temp file + rename so an interrupted run leaves no half-written output.
'use strict';
const fs = require('fs');
const path = require('path');

const [fixtures, vocabJson, outDir] = process.argv.slice(2);
if (!fixtures || !vocabJson || !outDir) {
  console.error('usage: node convert-sample-data.js FIXTURES_DIR VOCAB_JSON OUT_DIR');
  process.exit(2);
}

function writeAtomic(file, text) {
  const tmp = `${file}.tmp.${process.pid}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

// RFC 4180: quote a field when it holds a comma, quote, CR or LF; double inner quotes.
function csvField(s) {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

let rows = ['text,label,source'];
for (const source of ['amazon', 'imdb', 'yelp']) {
  const file = path.join(fixtures, `${source}.json`);
  const records = JSON.parse(fs.readFileSync(file, 'utf8'));
  let kept = 0;
  records.forEach((r, i) => {
    const text = typeof r.text === 'string' ? r.text.trim() : '';
    if (text === '' || (r.class !== 0 && r.class !== 1)) {
      console.error(`sample data: skipped ${source}.json record ${i}: ` +
                    `empty text or missing class (${JSON.stringify(r)})`);
      return;
    }
    rows.push([csvField(text), String(r.class), source].join(','));
    kept++;
  });
  console.error(`sample data: ${source}.json: ${kept} of ${records.length} records kept`);
}
writeAtomic(path.join(outDir, 'uci_sentiment.csv'), rows.join('\n') + '\n');

// sentencepiece-like spelling -> vocab.txt: "▁x" is word-initial "x", bare "x" is "##x",
// the lone "▁" is [unused0], bracketed specials stay as they are. Line index = id.
const vocab = JSON.parse(fs.readFileSync(vocabJson, 'utf8'));
const lines = vocab.map((tok) => {
  if (tok === '\u2581') return '[unused0]';
  if (/^\[.*\]$/.test(tok)) return tok;
  if (tok.startsWith('\u2581')) return tok.slice(1);
  return `##${tok}`;
});
const check = { the: 1996, ',': 1010, hello: 7592, '##ing': 2075, '[UNK]': 100, '[CLS]': 101 };
for (const [tok, id] of Object.entries(check)) {
  if (lines[id] !== tok) {
    console.error(`vocab conversion check failed: id ${id} is '${lines[id]}', expected '${tok}'`);
    process.exit(1);
  }
}
writeAtomic(path.join(outDir, 'vocab.txt'), lines.join('\n') + '\n');
console.error(`sample data: vocab.txt: ${lines.length} tokens`);
