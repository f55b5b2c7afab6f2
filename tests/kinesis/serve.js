// kinesalite for the tests, made to outlive a client that dies mid-request.
//
// kinesalite 3.3.3 leaves a request's 'error' unhandled, so a client killed while
// it sends a body (the Kinesis crash test kill -9s Partita during PutRecords) ends
// the whole server with "Error: aborted" (ECONNRESET). A real Kinesis endpoint
// outlives its clients; here that one error is dropped, and any other still ends it.
var argv = require('minimist')(process.argv.slice(2))

process.on('uncaughtException', function(err) {
  if (err && err.code === 'ECONNRESET') return
  console.error(err)
  process.exit(1)
})

var server = require('kinesalite')(argv).listen(argv.port || 4567, function() {
  var address = server.address()
  console.log('Listening at http://%s:%s', address.address, address.port)
})
