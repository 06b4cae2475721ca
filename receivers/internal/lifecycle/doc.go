// Package lifecycle is what every receiver does the same way around its
// one metric callback, from construction to Shutdown:
//
//   - Instruments creates the instruments of the metrics that are on and
//     keeps them, with the errors of those that could not be created;
//   - Callback registers the callback for them (nothing when every metric
//     is off), holds the lock that the callback and the receiver's other
//     methods keep its state under, and says when the receiver is down;
//   - Callback.Shutdown marks the receiver down, unregisters the callback
//     outside that lock — the SDK holds its own lock while the callback
//     runs, so unregistering under ours would deadlock against a
//     collection — and then releases what the receiver holds. It is safe
//     to call more than once.
//
// The package is internal to the receivers and has no telemetry of its
// own. It uses the OpenTelemetry metric API only.
package lifecycle
