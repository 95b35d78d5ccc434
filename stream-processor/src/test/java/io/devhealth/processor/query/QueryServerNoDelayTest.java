package io.devhealth.processor.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class QueryServerNoDelayTest {

    @Test
    void shouldTurnTcpNoDelayOnWhenNobodyChose() {
        Properties system = new Properties();

        QueryServer.preferNoDelay(system);

        assertThat(system.getProperty(QueryServer.NODELAY_PROPERTY)).isEqualTo("true");
    }

    @Test
    void shouldKeepTheOperatorsChoice() {
        Properties system = new Properties();
        system.setProperty(QueryServer.NODELAY_PROPERTY, "false");

        QueryServer.preferNoDelay(system);

        assertThat(system.getProperty(QueryServer.NODELAY_PROPERTY)).isEqualTo("false");
    }

    @Test
    void shouldHaveSetItForThisJvmOnceTheServerClassIsLoaded() throws Exception {
        Class.forName(QueryServer.class.getName(), true, QueryServer.class.getClassLoader());

        assertThat(System.getProperty(QueryServer.NODELAY_PROPERTY)).isNotNull();
    }
}
