package flux.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

/**
 * Starts a real Neo4j Community DBMS with a Bolt connector on a loopback address and keeps it running
 * until the process is signalled. Usage:
 *   java -cp ... flux.neo4j.Neo4jLauncher --home DIR --host 127.0.0.1 --port 7687
 *        [--pagecache-mb 256] [--password-file FILE]
 * With --password-file, auth is enabled and the `neo4j` user's password is set from the file on every start
 * (so changing FLUX_NEO4J_PASSWORD and restarting takes effect); without it, auth is disabled.
 */
public final class Neo4jLauncher {
    private Neo4jLauncher() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = parse(args);
        Path home = Path.of(require(opts, "--home")).toAbsolutePath();
        String host = opts.getOrDefault("--host", "127.0.0.1");
        int port = Integer.parseInt(opts.getOrDefault("--port", "7687"));
        long pagecacheMb = Long.parseLong(opts.getOrDefault("--pagecache-mb", "256"));
        String passwordFile = opts.get("--password-file");
        Files.createDirectories(home);

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pagecacheMb))
                .setConfig(GraphDatabaseSettings.auth_enabled, passwordFile != null)
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("flux-neo4j: shutting down");
            dbms.shutdown();
            stopped.countDown();
        }));

        if (passwordFile != null) {
            setPassword(dbms, Files.readString(Path.of(passwordFile)).strip());
        }
        // Touch the default database so "ready" means queries will succeed.
        dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");
        System.out.println("flux-neo4j: ready bolt://" + host + ":" + port);
        System.out.flush();
        stopped.await();
    }

    private static void setPassword(DatabaseManagementService dbms, String password) {
        Map<String, Object> params = new HashMap<>();
        params.put("pw", password);
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME)
                    .executeTransactionally("ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", params);
        } catch (RuntimeException e) {
            // Setting the password it already has is refused by Neo4j; that is the steady state.
            if (!String.valueOf(e.getMessage()).contains("cannot be the same")) {
                throw e;
            }
        }
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            out.put(args[i], args[i + 1]);
        }
        return out;
    }

    private static String require(Map<String, String> opts, String key) {
        String value = opts.get(key);
        if (value == null) {
            throw new IllegalArgumentException("missing required option " + key);
        }
        return value;
    }
}
