// The demos shown on the index page. Adding a demo is one line here (plus its page).
export const demos = [
  { href: 'echotest.html', title: 'Echo test', plugin: 'janus.plugin.echotest', text: 'Sends your camera and microphone to the server and plays back what it echoes, with live bitrate, RTT and loss.' },
  { href: 'videoroom.html', title: 'Video room', plugin: 'janus.plugin.videoroom', text: 'Publishes your camera as three simulcast layers and shows everyone else in the room, with the layer and bitrate strata sends you live.' },
  { href: 'audiobridge.html', title: 'Audio bridge', plugin: 'janus.plugin.audiobridge', text: 'Joins an audio conference mixed by the server: everyone hears everyone else. Mute yourself, and see who talks with live level bars.' },
  { href: 'recordplay.html', title: 'Record and play', plugin: 'janus.plugin.recordplay', text: 'Records your camera and microphone on the server as Janus does (.mjr files), lists the recordings and plays one back, with pause and resume.' },
  { href: 'streaming.html', title: 'Streaming', plugin: 'janus.plugin.streaming', text: 'Lists the mountpoints, watches one, switches to another on the same PeerConnection and picks the simulcast layer, with the layer, size and bitrate received shown live.' },
  { href: 'textroom.html', title: 'Text room', plugin: 'janus.plugin.textroom', text: 'Chats in a text room over a data channel: messages to everyone or to one participant, who joins and leaves, and announcements, as Janus\'s TextRoom does.' },
  { href: 'videocall.html', title: 'Video call', plugin: 'janus.plugin.videocall', text: 'Registers a name and calls another user, or answers their call: each sees the other, with text over the data channel. strata fits what each side receives to that side\'s own downlink.' },
  { href: 'lowprio.html', title: 'Low-priority transfer', plugin: 'janus.plugin.echotest', text: 'An echo test call and, on the same PeerConnection, a file or generated stream to or from the server with LEDBAT: watch the video keep its rate and delay while the transfer takes what is left.' },
];
