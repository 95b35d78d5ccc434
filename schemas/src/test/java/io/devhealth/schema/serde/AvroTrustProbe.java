package io.devhealth.schema.serde;

import io.devhealth.schema.avro.DeviceHealthReport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;

/**
 * Run by {@link AvroTrustTest} in a fresh JVM without {@code -Dorg.apache.avro.SERIALIZABLE_PACKAGES}:
 * Avro reads that property once, when its validator class initialises, so only a new JVM shows what
 * a service started without the flag would do.
 *
 * <p>Mode {@code plain} decodes with a bare {@link SpecificDatumReader} (expected: Avro refuses);
 * mode {@code serde} decodes through {@link AvroSerde} (expected: it works). Prints one line
 * starting {@code RESULT}; exit code 0 when the outcome matches the mode's expectation.
 */
public final class AvroTrustProbe {

    private AvroTrustProbe() {
    }

    public static void main(String[] args) throws IOException {
        if (System.getProperty("org.apache.avro.SERIALIZABLE_PACKAGES") != null
                || System.getProperty("org.apache.avro.SERIALIZABLE_CLASSES") != null) {
            System.out.println("RESULT property-set");
            System.exit(3);
        }
        DeviceHealthReport sample = SampleRecords.deviceHealthReport();
        if ("plain".equals(args[0])) {
            byte[] body = encode(sample);
            try {
                new SpecificDatumReader<>(DeviceHealthReport.class).read(null, DecoderFactory.get().binaryDecoder(body, null));
                System.out.println("RESULT decoded");
                System.exit(1);
            } catch (SecurityException e) {
                System.out.println("RESULT forbidden " + e.getMessage());
                System.exit(0);
            }
        }
        AvroSerde<DeviceHealthReport> serde = AvroSerde.of(DeviceHealthReport.class, new InMemorySchemaRegistry());
        DeviceHealthReport back = serde.deserializer().deserialize("t", serde.serializer().serialize("t", sample));
        System.out.println("RESULT " + (sample.equals(back) ? "decoded" : "different " + back));
        System.exit(sample.equals(back) ? 0 : 1);
    }

    private static byte[] encode(DeviceHealthReport report) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        new SpecificDatumWriter<>(DeviceHealthReport.class).write(report, encoder);
        encoder.flush();
        return out.toByteArray();
    }
}
