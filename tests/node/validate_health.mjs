// Reads an MCAP file with @mcap/core's stream reader, as Foxglove opens an unindexed file,
// and checks recd's `recd/health` channel independently of recd: its schema compiles as a
// JSON Schema (draft 2020-12, with ajv) and every message of the channel validates.
//
//   node validate_health.mjs FILE
//
// Prints {"messages": n, "schema_encoding": .., "message_encoding": .., "to": [..]};
// exits 1 naming the first message that does not validate.
import { readFile } from "node:fs/promises";
import { McapStreamReader } from "@mcap/core";
import Ajv2020 from "ajv/dist/2020.js";

const reader = new McapStreamReader({ validateCrcs: true });
reader.append(await readFile(process.argv[2]));
const schemas = new Map();
const channels = new Map();
const messages = [];
for (let record; (record = reader.nextRecord()); ) {
  if (record.type === "Schema") schemas.set(record.id, record);
  if (record.type === "Channel") channels.set(record.id, record);
  if (record.type === "Message" && channels.get(record.channelId).topic === "recd/health") {
    messages.push(JSON.parse(new TextDecoder().decode(record.data)));
  }
}
const channel = [...channels.values()].find((c) => c.topic === "recd/health");
const out = { messages: messages.length, to: messages.map((m) => m.to) };
if (channel) {
  const schema = schemas.get(channel.schemaId);
  const validate = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(
    JSON.parse(new TextDecoder().decode(schema.data)),
  );
  for (const message of messages) {
    if (!validate(message)) {
      console.error(JSON.stringify({ message, errors: validate.errors }));
      process.exit(1);
    }
  }
  out.schema_encoding = schema.encoding;
  out.message_encoding = channel.messageEncoding;
}
console.log(JSON.stringify(out));
