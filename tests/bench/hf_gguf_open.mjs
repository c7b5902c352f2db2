// Opens a GGUF at a URL with @huggingface/gguf (the Hub's GGUF viewer library) and prints the
// milliseconds it took and what it read: "ms keys tensors".
// usage: node hf_gguf_open.mjs HF_GGUF_PREFIX URL  (HF_GGUF_PREFIX: where `npm install --prefix` put it)
import { pathToFileURL } from "node:url";

const [prefix, url] = process.argv.slice(2);
const { gguf } = await import(pathToFileURL(`${prefix}/node_modules/@huggingface/gguf/dist/index.mjs`).href);
const start = performance.now();
const { metadata, tensorInfos } = await gguf(url);
const ms = performance.now() - start;
console.log(`${ms.toFixed(1)} ${Object.keys(metadata).length} ${tensorInfos.length}`);
