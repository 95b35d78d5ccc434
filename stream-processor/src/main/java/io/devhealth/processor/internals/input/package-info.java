/**
 * What a collector record must be to be applied: signed with its node's key ({@link SignedRecordDeserializer},
 * before it is decoded), speaking for the node of its key ({@link NodeIdentityCheck}), and making sense
 * ({@link InvalidInputException}: thrown before any state changes, so that the record becomes a dead letter).
 */
package io.devhealth.processor.internals.input;
