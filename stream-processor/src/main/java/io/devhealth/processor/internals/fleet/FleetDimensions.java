package io.devhealth.processor.internals.fleet;

import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.StatsDimension;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * The fleet dimensions a health transition counts in: its node, its DRA driver, its GPU product and its
 * reason, each as a key {@code DIMENSION:value}. The product comes from the {@value #PRODUCT_HEADER}
 * header the device processor sets from the node's inventory (HealthTransition itself has no product
 * field).
 */
public final class FleetDimensions {

    /** Header of a health-transitions record: the device's product name, when the inventory knows it. */
    public static final String PRODUCT_HEADER = "devhealth.product";
    /** The value of a dimension whose value is not known (no driver, no product, no reason). */
    public static final String UNKNOWN = "unknown";

    private FleetDimensions() {}

    /** The keys {@code transition}, read with {@code headers}, counts under: node, driver, product, reason. */
    static String[] keys(HealthTransition transition, Headers headers) {
        Header product = headers.lastHeader(PRODUCT_HEADER);
        String productName = product == null || product.value() == null ? null : new String(product.value(), StandardCharsets.UTF_8);
        return new String[] {
            key(StatsDimension.NODE, transition.getNode()),
            key(StatsDimension.DRIVER, transition.getDevice() == null ? null : transition.getDevice().getDriver()),
            key(StatsDimension.PRODUCT, productName),
            key(StatsDimension.REASON, transition.getReason()),
        };
    }

    public static String key(StatsDimension dimension, String value) {
        return dimension.name() + ":" + (value == null || value.isEmpty() ? UNKNOWN : value);
    }

    static StatsDimension dimension(String key) {
        int colon = key.indexOf(':');
        try {
            return colon < 0 ? StatsDimension.OTHER : StatsDimension.valueOf(key.substring(0, colon));
        } catch (IllegalArgumentException e) {
            return StatsDimension.OTHER;
        }
    }

    static String value(String key) {
        int colon = key.indexOf(':');
        return colon < 0 ? key : key.substring(colon + 1);
    }
}
