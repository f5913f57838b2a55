package kgw;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Starts an embedded Neo4j Community database with only the Bolt connector on
 * 127.0.0.1:PORT (argument 1, default 7688), auth disabled, data in a temporary folder
 * (argument 2, or a fresh one; removed again on exit). Prints "READY PORT" once Bolt accepts
 * connections and stays up until killed; the shutdown hook stops the database. For tests only.
 */
public final class Neo4jLauncher {
  private Neo4jLauncher() {}

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 7688;
    Path home = args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("kgw-neo4j-");
    DatabaseManagementService service = new DatabaseManagementServiceBuilder(home)
        .setConfig(BoltConnector.enabled, true)
        .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
        .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
        .setConfig(HttpConnector.enabled, false)
        .setConfig(HttpsConnector.enabled, false)
        .setConfig(GraphDatabaseSettings.auth_enabled, false)
        .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofSeconds(60))
        .build();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      service.shutdown();
      removeTree(home);
    }));
    service.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");
    System.out.println("READY " + port);
    System.out.flush();
    Thread.currentThread().join();
  }

  private static void removeTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      System.err.println("could not remove " + root + ": " + e.getMessage());
    }
  }
}
