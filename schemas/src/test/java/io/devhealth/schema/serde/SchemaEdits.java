package io.devhealth.schema.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Consumer;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;

/** Derives other writer schemas from a current one by editing its JSON, and frames bytes by hand. */
final class SchemaEdits {

    private static final ObjectMapper JSON = new ObjectMapper();

    private SchemaEdits() {
    }

    /** A copy of {@code schema} with {@code edit} applied to its JSON tree. */
    static Schema edit(Schema schema, Consumer<ObjectNode> edit) {
        try {
            ObjectNode tree = (ObjectNode) JSON.readTree(schema.toString());
            edit.accept(tree);
            return new Schema.Parser().parse(JSON.writeValueAsString(tree));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Appends {@code symbol} to the definition of the enum named {@code enumName}, wherever it is. */
    static Consumer<ObjectNode> addEnumSymbol(String enumName, String symbol) {
        return tree -> {
            ObjectNode definition = findNamed(tree, "enum", enumName);
            if (definition == null) {
                throw new IllegalArgumentException("No enum " + enumName);
            }
            ((ArrayNode) definition.get("symbols")).add(symbol);
        };
    }

    /** Removes the top-level fields {@code names}. */
    static Consumer<ObjectNode> removeFields(String... names) {
        return tree -> {
            ArrayNode fields = (ArrayNode) tree.get("fields");
            for (String name : names) {
                boolean removed = false;
                for (int i = 0; i < fields.size(); i++) {
                    if (fields.get(i).get("name").asText().equals(name)) {
                        fields.remove(i);
                        removed = true;
                        break;
                    }
                }
                if (!removed) {
                    throw new IllegalArgumentException("No field " + name);
                }
            }
        };
    }

    /** Adds a top-level field of type {@code type}, with {@code defaultValue} unless it is null. */
    static Consumer<ObjectNode> addField(String name, String type, JsonNode defaultValue) {
        return tree -> {
            ObjectNode field = ((ArrayNode) tree.get("fields")).addObject().put("name", name).put("type", type);
            if (defaultValue != null) {
                field.set("default", defaultValue);
            }
        };
    }

    private static ObjectNode findNamed(JsonNode node, String type, String name) {
        if (node.isObject()) {
            if (type.equals(node.path("type").asText()) && name.equals(node.path("name").asText())) {
                return (ObjectNode) node;
            }
        }
        for (JsonNode child : node) {
            ObjectNode found = findNamed(child, type, name);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /** Re-reads Avro binary written with {@code writer} as a generic record of {@code reader}. */
    static GenericRecord project(byte[] body, Schema writer, Schema reader) {
        try {
            GenericDatumReader<GenericRecord> datumReader = new GenericDatumReader<>(writer, reader, genericModel());
            return datumReader.read(null, DecoderFactory.get().binaryDecoder(body, null));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Avro binary of a generic record. */
    static byte[] encode(GenericRecord record, Schema writer) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
            new GenericDatumWriter<GenericRecord>(writer, genericModel()).write(record, encoder);
            encoder.flush();
            return out.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Confluent framing, written by hand: 0x00, big-endian id, body. */
    static byte[] frame(int id, byte[] body) {
        byte[] framed = new byte[5 + body.length];
        framed[0] = 0x00;
        framed[1] = (byte) (id >>> 24);
        framed[2] = (byte) (id >>> 16);
        framed[3] = (byte) (id >>> 8);
        framed[4] = (byte) id;
        System.arraycopy(body, 0, framed, 5, body.length);
        return framed;
    }

    /** The Avro body of a framed record. */
    static byte[] body(byte[] framed) {
        byte[] body = new byte[framed.length - 5];
        System.arraycopy(framed, 5, body, 0, body.length);
        return body;
    }

    /** A generic model without logical-type conversions: bytes stay bytes, timestamps stay longs. */
    private static GenericData genericModel() {
        return new GenericData();
    }
}
