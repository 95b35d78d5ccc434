package io.devhealth.processor.internals;

import io.devhealth.schema.avro.HealthTransition;
import io.devhealth.schema.avro.StatsDimension;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Fans a health transition out to the fleet dimensions it counts in: its node, its DRA driver, its GPU
 * product and its reason, each as key {@code DIMENSION:value} with the transition's count (one, by
 * target health, {@link FleetCounts}) as value. The product comes
 * from the {@value #PRODUCT_HEADER} header the device processor sets from the node's inventory
 * (HealthTransition itself has no product field).
 */
public final class FleetDimensions implements Processor<String, HealthTransition, String, FleetCounts> {

    /** Header of a health-transitions record: the device's product name, when the inventory knows it. */
    public static final String PRODUCT_HEADER = "devhealth.product";
    /** The value of a dimension whose value is not known (no driver, no product, no reason). */
    public static final String UNKNOWN = "unknown";

    private ProcessorContext<String, FleetCounts> context;

    @Override
    public void init(ProcessorContext<String, FleetCounts> context) {
        this.context = context;
    }

    @Override
    public void process(Record<String, HealthTransition> record) {
        HealthTransition transition = record.value();
        if (transition == null) {
            return;
        }
        Header product = record.headers().lastHeader(PRODUCT_HEADER);
        String productName = product == null || product.value() == null ? null : new String(product.value(), StandardCharsets.UTF_8);
        // What the count needs of the transition, not the transition: the repartition carries this once per dimension.
        FleetCounts one = FleetCounts.empty().add(transition);
        forward(record, StatsDimension.NODE, transition.getNode(), one);
        forward(record, StatsDimension.DRIVER, transition.getDevice() == null ? null : transition.getDevice().getDriver(), one);
        forward(record, StatsDimension.PRODUCT, productName, one);
        forward(record, StatsDimension.REASON, transition.getReason(), one);
    }

    private void forward(Record<String, HealthTransition> record, StatsDimension dimension, String value, FleetCounts one) {
        context.forward(new Record<>(key(dimension, value), one, record.timestamp()));
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
