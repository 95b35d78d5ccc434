package io.devhealth.collector.nvml.internals;

import io.devhealth.collector.nvml.jna.Nvml.RemappedRows;
import java.util.List;
import java.util.Map;

/**
 * One poll of one GPU. A null field was not read: the GPU or driver does not support it.
 *
 * @param nvLinks link number → active, for the links this GPU supports
 * @param errors NVML calls that failed for another reason than NOT_SUPPORTED, in words
 */
public record Readings(Integer temperatureC, Integer slowdownC, RemappedRows remappedRows, Boolean retiredPagesPending,
        Long volatileUncorrectedEcc, Map<Integer, Boolean> nvLinks, Long clocksEventReasons, Integer powerMw, Integer powerLimitMw,
        Long energyMj, Long recoveryAction, List<String> errors) {

    public Readings {
        nvLinks = nvLinks == null ? Map.of() : Map.copyOf(nvLinks);
        errors = errors == null ? List.of() : List.copyOf(errors);
    }
}
