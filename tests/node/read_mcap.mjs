// Reads MCAP files with @mcap/core, the TypeScript library Foxglove and Lichtblick open
// files with: once with its stream reader (record by record, as for an unindexed file) and
// once with its indexed reader (through the summary, as for a seekable file), and prints,
// per file, what each saw as JSON: messages and a digest of every message (topic, log
// time, payload) that does not depend on their order.
//
//   node read_mcap.mjs FILE...
import { createHash } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { decompress as zstdDecompress } from "fzstd";
import lz4 from "lz4js";

const decompressHandlers = {
  zstd: (data, size) => zstdDecompress(data, new Uint8Array(Number(size))),
  lz4: (data, size) => {
    const out = new Uint8Array(Number(size));
    lz4.decompressFrame(data, out);
    return out;
  },
};

function messageKey(topic, logTime, data) {
  const payload = createHash("sha256").update(data).digest("hex");
  return `${topic} ${logTime} ${payload}`;
}

function digest(keys) {
  keys.sort();
  const hash = createHash("sha256");
  for (const key of keys) hash.update(key + "\n");
  return hash.digest("hex");
}

async function streamRead(path) {
  const reader = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  reader.append(await readFile(path));
  const topics = new Map();
  const keys = [];
  for (let record; (record = reader.nextRecord()); ) {
    if (record.type === "Channel") topics.set(record.id, record.topic);
    if (record.type === "Message") {
      keys.push(messageKey(topics.get(record.channelId), record.logTime, record.data));
    }
  }
  return { messages: keys.length, digest: digest(keys), done: reader.done() };
}

async function indexedRead(path) {
  const handle = await open(path, "r");
  try {
    const readable = {
      size: async () => BigInt((await handle.stat()).size),
      read: async (offset, size) => {
        const buffer = new Uint8Array(Number(size));
        const { bytesRead } = await handle.read(buffer, 0, Number(size), Number(offset));
        if (bytesRead !== Number(size)) throw new Error(`short read at ${offset}`);
        return buffer;
      },
    };
    const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers });
    const keys = [];
    for await (const message of reader.readMessages({ validateCrcs: true })) {
      const topic = reader.channelsById.get(message.channelId).topic;
      keys.push(messageKey(topic, message.logTime, message.data));
    }
    return {
      messages: keys.length,
      digest: digest(keys),
      chunks: reader.chunkIndexes.length,
      statistics: reader.statistics ? Number(reader.statistics.messageCount) : null,
    };
  } catch (error) {
    return { error: String(error) };
  } finally {
    await handle.close();
  }
}

const result = {};
for (const path of process.argv.slice(2)) {
  result[path] = { stream: await streamRead(path), indexed: await indexedRead(path) };
}
console.log(JSON.stringify(result));
