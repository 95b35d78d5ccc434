package io.devhealth.processor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import org.apache.kafka.streams.CloseOptions.GroupMembershipOperation;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class MembershipOnCloseTest {

    @Test
    void shouldLeaveTheGroupAsADynamicMember() {
        assertThat(StreamProcessorApp.membershipOnClose(new Properties())).isEqualTo(GroupMembershipOperation.LEAVE_GROUP);
    }

    @Test
    void shouldStayInTheGroupAsAStaticMemberHoweverItsIdIsGiven() {
        for (String key : new String[] {"group.instance.id", StreamsConfig.mainConsumerPrefix("group.instance.id"),
                StreamsConfig.consumerPrefix("group.instance.id")}) {
            Properties props = new Properties();
            props.put(key, "processor-0");
            assertThat(StreamProcessorApp.membershipOnClose(props)).as(key).isEqualTo(GroupMembershipOperation.REMAIN_IN_GROUP);
        }
    }
}
