// Decodes the ROS 2 messages of an MCAP file the way Foxglove does: @mcap/core's stream
// reader for the records, @foxglove/rosmsg to parse each channel's `ros2msg` schema and
// @foxglove/rosmsg2-serialization to read the CDR against it. Prints one JSON line per
// message: {"topic", "type", "data"}, byte arrays as lists of numbers, 64-bit integers as
// numbers. A schema that does not parse or a message that does not decode fails the run.
//
//   node read_ros2.mjs FILE
import { readFile } from "node:fs/promises";
import { McapStreamReader } from "@mcap/core";
import { parse } from "@foxglove/rosmsg";
import { MessageReader } from "@foxglove/rosmsg2-serialization";

function plain(value) {
  if (typeof value === "bigint") return Number(value);
  if (ArrayBuffer.isView(value)) return Array.from(value, plain);
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

const reader = new McapStreamReader({ validateCrcs: true });
reader.append(await readFile(process.argv[2]));
const schemas = new Map();
const channels = new Map();
for (let record; (record = reader.nextRecord()); ) {
  if (record.type === "Schema") schemas.set(record.id, record);
  if (record.type === "Channel") {
    const schema = schemas.get(record.schemaId);
    if (record.messageEncoding !== "cdr" || schema?.encoding !== "ros2msg") continue;
    const text = new TextDecoder().decode(schema.data);
    channels.set(record.id, {
      topic: record.topic,
      type: schema.name,
      reader: new MessageReader(parse(text, { ros2: true })),
    });
  }
  if (record.type === "Message") {
    const channel = channels.get(record.channelId);
    if (!channel) continue;
    const data = plain(channel.reader.readMessage(record.data));
    console.log(JSON.stringify({ topic: channel.topic, type: channel.type, data }));
  }
}
